/** fast-check generators of hostile and valid query values. */
import fc from 'fast-check';
import { TYPES, STATUSES, type ListParam, type Style, type Value, type Pair, PERIODS, DATE_FIELDS, SORT_FIELDS, SORT_DIRS, ENUMS } from './contract.js';

export const ODD_CHARS = [
  '\u0000',
  '\u0001',
  '\t',
  '\n',
  '\r',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u200b',
  '\u200d',
  '\u200f',
  '\u202e',
  '\u2028',
  '\ufeff',
  '\u0301',
  '\u0338',
  '𝔘',
  '😀',
  '👩‍👩‍👧',
  'שלום',
  'مرحبا',
  'ß',
  'ẞ',
  'İ',
  'ı',
  'ς',
  'Σ',
  'ﬁ',
  'Å',
  '한',
  '\uffff',
];
export const SYMBOLS = [' ', ',', '%', '_', '\\', '&', '=', '+', '#', '?', '[', ']', '"', "'", ';', '/', '*'];
export const NUMBERISH = [
  '0',
  '1',
  '-1',
  '-0',
  '1.5',
  '1.0',
  '1e3',
  '0x10',
  '+1',
  ' 1',
  '1 ',
  '１',
  '٣',
  'Infinity',
  'NaN',
  '9007199254740991',
  '9007199254740992',
  '99999999999999999999',
  '1'.repeat(400),
  '00',
  '0001',
  '501',
  '500',
  '250',
];
export const DATEISH = [
  '2026-02-29',
  '2024-02-29',
  '2026-13-01',
  '2026-00-10',
  '2026-04-31',
  '2026-1-1',
  '26-01-01',
  '2026/01/01',
  '20260101',
  '2026-01-01T00:00:00Z',
  '0000-01-01',
  '9999-12-31',
  ' 2026-11-22',
  '+2026-01-01',
  '２０２６-01-01',
];
export const RAW_JUNK = ['%', '%%', '%zz', '%C3', '%C3%28', '%ED%A0%80', '%F0%9F', '%FF%FE', '%00', '%0', 'a%2', '%E2%80%AE', '%2C%2C', '%5B%5D'];
export const ALL_MEMBERS = [...TYPES, ...STATUSES, ...PERIODS, ...DATE_FIELDS, ...SORT_FIELDS, ...SORT_DIRS];

export const weighted = (trueWeight: number, falseWeight: number) =>
  fc.oneof({ weight: trueWeight, arbitrary: fc.constant(true) }, { weight: falseWeight, arbitrary: fc.constant(false) });
export const oddText = fc.array(fc.constantFrom(...ODD_CHARS, ...SYMBOLS, 'a', 'Z', '7'), { minLength: 1, maxLength: 8 }).map((a) => a.join(''));
export const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 24 }), fc.string({ unit: 'grapheme', maxLength: 12 }), oddText);
export const hostileList = fc
  .array(fc.oneof(fc.constantFrom(...ALL_MEMBERS, '', ' ', 'X', 'PAID', 'S', '1', '-1', '1.5', '99999999999999999999'), anyText), {
    minLength: 1,
    maxLength: 6,
  })
  .map((items) => items.join(','));
export const hostileValue: fc.Arbitrary<Value> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(...NUMBERISH, ...DATEISH, ...ALL_MEMBERS.map((m) => m.toUpperCase()), "' OR 1=1 --", 'a_b', '%_\\').map((text) => ({ text })),
  },
  { weight: 3, arbitrary: anyText.map((text) => ({ text })) },
  { weight: 2, arbitrary: hostileList.map((text) => ({ text })) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map((n) => ({ text: String(n) })) },
  { weight: 1, arbitrary: fc.double().map((n) => ({ text: String(n) })) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...RAW_JUNK, 'a', '1', ','), { minLength: 1, maxLength: 5 }).map((a) => ({ raw: a.join('') })) },
  { weight: 1, arbitrary: fc.constant({ bare: true as const }) },
  { weight: 1, arbitrary: fc.constant({ text: '' }) },
  {
    weight: 1,
    arbitrary: fc.record({ fill: fc.constantFrom('a', '%', '😀', '\u0000', 'ß', ',', 's,', '1', ' '), bytes: fc.integer({ min: 300, max: 8000 }) }),
  },
);

/** A valid value for a list parameter, so that hostile queries reach the 200 branch too. */
export function validListValue(param: ListParam): fc.Arbitrary<string> {
  const day = fc
    .date({ min: new Date('2026-05-01T00:00:00Z'), max: new Date('2027-03-31T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10));
  const listOfMembers = (members: readonly string[]) =>
    fc
      .array(fc.tuple(fc.constantFrom(...members), fc.constantFrom('', '', ' ', '  '), fc.constantFrom('', '', ' ')), { minLength: 1, maxLength: 4 })
      .map((items) => items.map(([m, a, b]) => a + m + b).join(','));
  switch (param) {
    case 'page':
      return fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constant(Number.MAX_SAFE_INTEGER)).map(String);
    case 'per_page':
      return fc.oneof(fc.integer({ min: 1, max: 10 }), fc.constant(500)).map(String);
    case 'date_from':
    case 'date_to':
      return day;
    case 'types':
      return listOfMembers(TYPES);
    case 'statuses':
      return listOfMembers(STATUSES);
    case 'branch_ids':
      return listOfMembers(['0', '1', '2', '3', '007', '9007199254740991']);
    case 'customer_vats':
      return listOfMembers(['pl1234567890', 'DE811111111', 'cz12345678', 'nope']);
    case 'customer_name':
      return fc.constantFrom('rhein', 'ŁÓDŹ', '%', '_', 'ämter', ' Freight ');
    case 'search':
      return fc.constantFrom('fv/1', '100%_', '\\', 'BH/2026', 'surcharge', 'ORD/9');
    case 'customer_country':
      return fc.constantFrom('de', 'PL', 'Cz', 'xx');
    default:
      return fc.constantFrom(...ENUMS[param]!);
  }
}

export const suffixArb = fc.oneof(
  { weight: 14, arbitrary: fc.constant('') },
  { weight: 3, arbitrary: fc.constantFrom('[]', '[x]', '[0][y]', '%5B%5D', '[', '[]]') },
);
export const styleArb = fc.constantFrom<Style>('strict', 'plus', 'loose', 'all');
export const junkArb = fc.array(fc.constantFrom('', '=', '=x', 'x', '%', 'a=b=c', ';', '?', '&'), { maxLength: 3 });

export function hostilePairArb(names: readonly string[], validValue: (name: string) => fc.Arbitrary<string> | null): fc.Arbitrary<Pair> {
  const name = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...names) },
    { weight: 1, arbitrary: fc.constantFrom('foo', 'PAGE', 'page ', 'Nr', '__proto__', 'constructor', 'toString', '', 'types]', 'sort') },
  );
  return name.chain((n) => {
    const valid = validValue(n);
    const value: fc.Arbitrary<Value> = valid
      ? fc.oneof({ weight: 4, arbitrary: valid.map((text) => ({ text })) }, { weight: 5, arbitrary: hostileValue })
      : hostileValue;
    return fc.record({ name: fc.constant(n), suffix: suffixArb, encodeName: weighted(1, 9), value });
  });
}
