import fc from 'fast-check';

/**
 * Generated spellings of webhook targets: every non-public address range in
 * every form a URL parser or resolver reads (decimal, octal and hex IPv4 parts,
 * short forms, IPv6 full or compressed, IPv4 embedded in IPv6), localhost
 * names with trailing dots, and public ones to tell them from.
 */

export type Cidr4 = readonly [number, number];
const ip4 = (a: number, b: number, c: number, d: number): number => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

/** Every IPv4 range that is not public, the metadata and CGNAT ranges among them. */
export const FORBIDDEN_V4: readonly Cidr4[] = [
  [ip4(127, 0, 0, 0), 8],
  [ip4(10, 0, 0, 0), 8],
  [ip4(172, 16, 0, 0), 12],
  [ip4(192, 168, 0, 0), 16],
  [ip4(169, 254, 0, 0), 16],
  [ip4(100, 64, 0, 0), 10],
  [ip4(0, 0, 0, 0), 8],
  [ip4(224, 0, 0, 0), 4],
  [ip4(240, 0, 0, 0), 4],
  [ip4(192, 0, 0, 0), 24],
  [ip4(192, 0, 2, 0), 24],
  [ip4(198, 18, 0, 0), 15],
  [ip4(198, 51, 100, 0), 24],
  [ip4(203, 0, 113, 0), 24],
];
export const PUBLIC_V4: readonly Cidr4[] = [
  [ip4(8, 8, 0, 0), 16],
  [ip4(1, 1, 1, 0), 24],
];

function inCidr([base, bits]: Cidr4): fc.Arbitrary<number> {
  const hostBits = 32 - bits;
  return fc.nat({ max: 2 ** hostBits - 1 }).map((host) => (base + host) >>> 0);
}
export const v4From = (ranges: readonly Cidr4[]) => fc.constantFrom(...ranges).chain(inCidr);

export const dotted = (n: number): string => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
export const randomCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((ups) => [...text].map((ch, i) => (ups[i] ? ch.toUpperCase() : ch.toLowerCase())).join(''));

/** One number in a radix the WHATWG IPv4 parser (and inet_aton) reads: decimal, octal with a leading 0, or hex with 0x. */
function numberSpelling(value: number): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constant(String(value)),
    fc.constant(`0${value.toString(8)}`),
    fc.nat({ max: 3 }).chain((zeros) => randomCase(`0x${'0'.repeat(zeros)}${value.toString(16)}`)),
  );
}

/** 1 to 4 parts, the last one holding the remaining bits (`127.1`, `2130706433`, `0x7f.0.1`), each in its own radix, maybe with one trailing dot. */
export function ipv4Spelling(n: number): fc.Arbitrary<string> {
  return fc.integer({ min: 1, max: 4 }).chain((count) => {
    const bytes = [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
    const leading = bytes.slice(0, count - 1);
    const restBits = 8 * (5 - count);
    const rest = restBits === 32 ? n : n % 2 ** restBits;
    return fc.tuple(fc.tuple(...[...leading, rest].map(numberSpelling)), fc.constantFrom('', '.')).map(([parts, dot]) => parts.join('.') + dot);
  });
}

function groupsOf(n: number): [number, number] {
  return [n >>> 16, n & 0xffff];
}

/** An IPv6 address written full or compressed (any one run of zero groups), padded or not, in any case; the last 32 bits maybe dotted. */
export function ipv6Spelling(groups: readonly number[], allowDottedTail = true): fc.Arbitrary<string> {
  const runs: Array<[number, number]> = [];
  for (let i = 0; i < 8; i++) {
    if (groups[i] !== 0) continue;
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    for (let start = i; start < j; start++) for (let end = start + 1; end <= j; end++) runs.push([start, end]);
    i = j;
  }
  return fc
    .record({
      pad: fc.boolean(),
      upper: fc.boolean(),
      dottedTail: allowDottedTail ? fc.boolean() : fc.constant(false),
      run: runs.length > 0 ? fc.option(fc.constantFrom(...runs), { nil: null }) : fc.constant(null),
    })
    .map(({ pad, upper, dottedTail, run }) => {
      const text = (g: number) => {
        const hex = pad ? g.toString(16).padStart(4, '0') : g.toString(16);
        return upper ? hex.toUpperCase() : hex;
      };
      const head = dottedTail ? groups.slice(0, 6) : groups;
      const tail = dottedTail ? [dotted(((groups[6]! << 16) | groups[7]!) >>> 0)] : [];
      const written = head.map(text);
      if (run && run[1] <= head.length) {
        const [start, end] = run;
        const before = written.slice(0, start).join(':');
        const after = [...written.slice(end), ...tail].join(':');
        return `${before}::${after}`;
      }
      return [...written, ...tail].join(':');
    });
}

/** IPv6 forms that carry an IPv4 address: mapped, translated, NAT64 well-known prefix, 6to4; and the deprecated compatible form for non-public ones. */
export function embeddingSpellings(n: number, includeCompatible: boolean): fc.Arbitrary<string> {
  const [high, low] = groupsOf(n);
  const forms = [
    [0, 0, 0, 0, 0, 0xffff, high, low],
    [0, 0, 0, 0, 0xffff, 0, high, low],
    [0x64, 0xff9b, 0, 0, 0, 0, high, low],
  ].map((g) => ipv6Spelling(g));
  const sixToFour = fc.nat({ max: 0xffff }).chain((suffix) => ipv6Spelling([0x2002, high, low, 0, 0, 0, 0, suffix], false));
  const compatible = includeCompatible ? [ipv6Spelling([0, 0, 0, 0, 0, 0, high, low])] : [];
  return fc.oneof(...forms, sixToFour, ...compatible);
}

function v6In(prefix: readonly number[], prefixBits: number): fc.Arbitrary<number[]> {
  return fc.array(fc.nat({ max: 0xffff }), { minLength: 8, maxLength: 8 }).map((random) =>
    random.map((value, i) => {
      const bitsHere = Math.max(0, Math.min(16, prefixBits - 16 * i));
      const mask = bitsHere === 0 ? 0 : (0xffff << (16 - bitsHere)) & 0xffff;
      return ((prefix[i] ?? 0) & mask) | (value & ~mask & 0xffff);
    }),
  );
}

// Groups past the prefix are often zero, so runs of zeros (and so compression) are common.
const sparseV6 = (prefix: readonly number[], bits: number) =>
  v6In(prefix, bits).chain((groups) =>
    fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }).map((zero) => groups.map((g, i) => (16 * i >= bits && zero[i] ? 0 : g))),
  );
export const FORBIDDEN_V6 = fc.oneof(
  fc.constant([0, 0, 0, 0, 0, 0, 0, 1]),
  fc.constant([0, 0, 0, 0, 0, 0, 0, 0]),
  sparseV6([0xfe80], 10),
  sparseV6([0xfc00], 7),
  sparseV6([0xff00], 8),
  sparseV6([0x2001, 0], 32),
  sparseV6([0x2001, 0xdb8], 32),
  sparseV6([0x100, 0, 0, 0], 64),
);
export const PUBLIC_V6 = sparseV6([0x2001, 0x4860], 32);

const trailingDots = fc.constantFrom('', '.', '..', '...');
const label = fc.stringMatching(/^[a-z0-9]{1,12}$/);
export const localhostName = fc
  .tuple(fc.array(label, { maxLength: 3 }), randomCase('localhost'), trailingDots)
  .map(([labels, name, dots]) => [...labels, name].join('.') + dots);

export const forbiddenHost = fc.oneof(
  { weight: 4, arbitrary: v4From(FORBIDDEN_V4).chain(ipv4Spelling) },
  { weight: 1, arbitrary: v4From(FORBIDDEN_V4).map((n) => `${dotted(n)}..`) },
  {
    weight: 3,
    arbitrary: v4From(FORBIDDEN_V4)
      .chain((n) => embeddingSpellings(n, true))
      .map((a) => `[${a}]`),
  },
  { weight: 3, arbitrary: FORBIDDEN_V6.chain((g) => ipv6Spelling(g)).map((a) => `[${a}]`) },
  { weight: 2, arbitrary: localhostName },
);
export const publicHost = fc.oneof(
  v4From(PUBLIC_V4).chain(ipv4Spelling),
  v4From(PUBLIC_V4)
    .chain((n) => embeddingSpellings(n, false))
    .map((a) => `[${a}]`),
  PUBLIC_V6.chain((g) => ipv6Spelling(g)).map((a) => `[${a}]`),
);

const port = fc.option(
  fc.integer({ min: 1, max: 65535 }).map((p) => `:${p}`),
  { nil: '' },
);
const pathAndQuery = fc.constantFrom('', '/', '/hooks', '/a/b/c?x=1', '/latest/meta-data/iam?x=y#frag', '/%2e%2e/in');
export const urlWith = (host: fc.Arbitrary<string>) =>
  fc.tuple(randomCase('https'), host, port, pathAndQuery).map(([scheme, h, p, rest]) => `${scheme}://${h}${p}${rest}`);
