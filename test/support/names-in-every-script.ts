import fc from 'fast-check';

/** Names in every script a seller or buyer may have, and characters XML 1.0 forbids (dropped, never written). */
export const NAMES = [
  'SIA Kuļļi',
  'Łódź Ćma Spółka',
  'ООО «Ромашка»',
  'Ελληνική Μεταφορική Α.Ε.',
  'İĞŞıöç Lojistik A.Ş.',
  'Cafe\u0301 Transports', // a combining acute accent
  'Emoji 🚚 Freight 👨‍👩‍👧', // with a ZWJ sequence
  'הובלות ישראל בע"מ',
  'شركة النقل',
  'Con\u0001trol\u0008 \u000B\u000Cchars\uFFFE\uFFFF and a lone \uD800 surrogate',
] as const;

// eslint-disable-next-line no-control-regex -- the characters XML 1.0 forbids, written out here as the oracle
export const XML_1_0_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/u;

/** A name as XML carries it: what XML 1.0 forbids dropped, the rest as it was. */
export function xmlSafe(name: string): string {
  return name.replace(new RegExp(XML_1_0_FORBIDDEN.source, 'gu'), '');
}

/** Generated names from the same alphabet of scripts, markup and forbidden characters; the same for a seed. */
export function generatedNames(count: number, seed: number): string[] {
  return fc.sample(
    fc.string({ unit: fc.constantFrom('a', 'ļ', 'Ж', 'λ', 'ı', 'e\u0301', '🚚', 'ש', '&', '<', '"', ' ', '\u0002', '\uFFFF'), minLength: 1, maxLength: 24 }),
    { numRuns: count, seed },
  );
}
