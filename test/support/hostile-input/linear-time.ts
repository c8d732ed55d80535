/**
 * Linear time, told apart from super-linear without a flaky timer: the same parser on the same
 * shape of text at 16 KiB and at 64 KiB, the fastest of several runs of each (a busy machine only
 * ever adds time). A linear parser takes about 4 times as long on the larger text, a quadratic
 * one about 16 times: the line is drawn at 8. Under 200 ms on 64 KiB the ratio is not read: there
 * the garbage collector's moments weigh as much as the parse (a list of 64 Ki items made ratios of
 * 3 to 12 run after run), and no quadratic parse is that fast: 64 Ki characters squared are 4e9
 * steps, seconds (the old Range expression: 4 s). Whatever the ratio, no parse of 64 KiB may take
 * a second, hundreds of times what a linear one takes.
 */
import fc from 'fast-check';

export const LARGE = 64 * 1024;
export const SMALL = LARGE / 4;
/** Linear is 4, quadratic 16. */
export const MAX_RATIO = 8;
/** Below this a time on 64 KiB is not compared, and no quadratic parse of 64 Ki characters is this fast. */
export const FLOOR_MS = 200;
/** No parse of 64 KiB may take this long, whatever its growth: hundreds of times a linear parse's cost. */
export const BOUND_MS = 1000;

/** Text of `length` characters in one shape: a prefix, a unit repeated, a suffix. */
export interface Shape {
  prefix: string;
  unit: string;
  suffix: string;
}

export function textOf(shape: Shape, length: number): string {
  const room = Math.max(0, length - shape.prefix.length - shape.suffix.length);
  return shape.prefix + shape.unit.repeat(Math.ceil(room / shape.unit.length)).slice(0, room) + shape.suffix;
}

export interface Growth {
  smallMs: number;
  largeMs: number;
  ratio: number;
  linear: boolean;
}

/** The fastest of `runs` calls, taken in turn on the small and the large text so that a busy moment hits both. */
export function growthOf(parse: (text: string) => unknown, shape: Shape, runs = 5): Growth {
  const small = textOf(shape, SMALL);
  const large = textOf(shape, LARGE);
  let smallMs = Infinity;
  let largeMs = Infinity;
  for (let run = 0; run < runs; run++) {
    smallMs = Math.min(smallMs, timed(parse, small));
    const took = timed(parse, large);
    largeMs = Math.min(largeMs, took);
    // The fastest only gets faster: under the floor, the verdict is in.
    if (largeMs <= FLOOR_MS) break;
    // Over the bound is a verdict already (confirmedGrowthOf measures again); more runs of a quadratic parse only cost seconds.
    if (took > BOUND_MS) break;
  }
  const ratio = largeMs / Math.max(smallMs, 0.001);
  return { smallMs, largeMs, ratio, linear: largeMs <= BOUND_MS && (largeMs <= FLOOR_MS || ratio <= MAX_RATIO) };
}

/** As growthOf; a verdict of super-linear is measured again with more runs before it stands, so one busy moment cannot make it. */
export function confirmedGrowthOf(parse: (text: string) => unknown, shape: Shape): Growth {
  const first = growthOf(parse, shape);
  return first.linear ? first : growthOf(parse, shape, 15);
}

function timed(parse: (text: string) => unknown, text: string): number {
  const started = performance.now();
  parse(text);
  return performance.now() - started;
}

/** What the old parsers and the regexes the lint found choked on: runs that one quantifier can hand to the next. */
export const KNOWN_WORST: Shape[] = [
  { prefix: 'bytes=0-', unit: ' ', suffix: 'x' },
  { prefix: 'bytes=', unit: ' ', suffix: 'x' },
  { prefix: 'bytes=0', unit: ' ', suffix: '-x' },
  { prefix: 'bytes=0-', unit: '\t', suffix: '\u0000' },
  { prefix: '', unit: ' ', suffix: 'x' },
  { prefix: 'Bearer ', unit: ' ', suffix: '\u0000' },
  { prefix: 'Bearer ', unit: 'a', suffix: ' \u0000' },
  { prefix: 'Basic ', unit: ' ', suffix: '=' },
  { prefix: 'Basic ', unit: 'QQ', suffix: '=== ' },
  { prefix: '', unit: 'W/', suffix: '"' },
  { prefix: '', unit: '"', suffix: '' },
  { prefix: '"', unit: '\\', suffix: '' },
  { prefix: 'multipart/form-data; boundary=', unit: ' ', suffix: ';' },
  { prefix: 'application/json;', unit: ' ;', suffix: 'x' },
  { prefix: 'multipart/form-data; a="', unit: '\\"', suffix: '' },
  { prefix: '', unit: ',', suffix: 'x' },
  { prefix: '', unit: ' ,', suffix: '' },
  { prefix: '', unit: '1,', suffix: 'x' },
  { prefix: '', unit: '0', suffix: 'x' },
  { prefix: '', unit: '=', suffix: '' },
  { prefix: '', unit: '-', suffix: '' },
  { prefix: '', unit: '&', suffix: '' },
  { prefix: '', unit: '.', suffix: 'x' },
  { prefix: '', unit: '%', suffix: '' },
  { prefix: '', unit: '%2', suffix: '' },
  { prefix: '', unit: 'a=&', suffix: '' },
  { prefix: '2026-01-01', unit: ' ', suffix: 'x' },
  { prefix: '', unit: '\u00a0', suffix: 'x' },
  { prefix: '', unit: '\u2028', suffix: '' },
  { prefix: '', unit: '😀', suffix: '' },
  { prefix: '', unit: 'ß\u0301', suffix: '' },
];

/** Characters hostile to parsers of headers and queries: separators, quotes, escapes, digits, white space of every kind. */
const HOSTILE_CHARS = [
  ' ',
  '\t',
  ',',
  ';',
  '=',
  '-',
  '"',
  "'",
  '\\',
  '/',
  '.',
  ':',
  '&',
  '%',
  '+',
  '*',
  '0',
  '9',
  'a',
  'Z',
  'W',
  'x',
  '\u0000',
  '\u007f',
  '\u00a0',
  '\u2028',
  '\ufeff',
  'ß',
  'İ',
  '😀',
  '\u0301',
];

const hostileText = (maxLength: number) => fc.array(fc.constantFrom(...HOSTILE_CHARS), { minLength: 0, maxLength }).map((chars) => chars.join(''));

/** A generated shape: a few hostile characters, repeated, between a short prefix and suffix (the prefix often one a parser expects). */
export function shapeArb(prefixes: readonly string[]): fc.Arbitrary<Shape> {
  return fc.record({
    prefix: fc.oneof({ weight: 2, arbitrary: fc.constantFrom('', ...prefixes) }, { weight: 1, arbitrary: hostileText(6) }),
    // A run of one character is what a quantifier backtracks over; longer units repeat separators.
    unit: fc.oneof(
      fc.constantFrom(...HOSTILE_CHARS),
      hostileText(4).filter((unit) => unit !== ''),
    ),
    suffix: hostileText(3),
  });
}
