/**
 * The text side of the trigram index: folded coarser than either database's matching, so the index never misses
 * a row the database's own predicate would match (docs/contribute/decisions/0022-trigram-search-index.md).
 */

const MARKS_AND_IGNORABLES = /[\p{M}\p{Cc}\p{Cf}]/gu;

/** Mapped per character, after lower-casing and decomposition. */
const BASE_LETTERS: Record<string, string> = {
  ł: 'l',
  ŀ: 'l',
  đ: 'd',
  ð: 'd',
  ø: 'o',
  ı: 'i',
  ħ: 'h',
  ŧ: 't',
  ĸ: 'k',
  ŋ: 'n',
  ς: 'σ',
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  þ: 'th',
};
const BASE_LETTER_PATTERN = new RegExp(`[${Object.keys(BASE_LETTERS).join('')}]`, 'gu');

/** The folded form the index stores and looks up, as an array of code points. */
export function indexFold(text: string): string[] {
  const folded = text
    .normalize('NFKD')
    .toLowerCase()
    .normalize('NFKD')
    .replace(MARKS_AND_IGNORABLES, '')
    .replace(BASE_LETTER_PATTERN, (char) => BASE_LETTERS[char]!);
  return [...folded];
}

/** Fragments shorter than this (after folding) have no trigram: they are matched by a scan. */
export const TRIGRAM_LENGTH = 3;

/** The distinct trigrams of a text, folded. */
export function trigramsOf(text: string): Set<string> {
  const chars = indexFold(text);
  const grams = new Set<string>();
  for (let start = 0; start + TRIGRAM_LENGTH <= chars.length; start += 1) {
    grams.add(chars.slice(start, start + TRIGRAM_LENGTH).join(''));
  }
  return grams;
}

/** What a posting list is about: each kind has its own codes. */
export const SEARCH_KINDS = {
  /** An invoice's nr, its related orders' nrs and its items' texts (the `search` filter). */
  invoiceText: 1,
  /** An invoice's customer name (the `customer_name` filter). */
  customerName: 2,
  /** An order's nr (`GET /orders/by-nr`). */
  orderNr: 3,
} as const;
export type SearchKind = (typeof SEARCH_KINDS)[keyof typeof SEARCH_KINDS];

/**
 * The number stored for a trigram of one kind in one directory: a 53-bit hash
 * (cyrb53), exact in a JavaScript number and in BIGINT. Two keys that collide
 * share a posting list, which only adds candidates.
 */
export function trigramCode(kind: SearchKind, directory: string, trigram: string): number {
  return cyrb53(`${kind}\u0001${directory}\u0001${trigram}`);
}

/** The codes of every trigram of the texts of one document, without repeats. */
export function documentCodes(kind: SearchKind, directory: string, texts: Iterable<string>): Set<number> {
  const codes = new Set<number>();
  for (const text of texts) for (const gram of trigramsOf(text)) codes.add(trigramCode(kind, directory, gram));
  return codes;
}

/** cyrb53 by bryc (public domain): a fast, well-mixed 53-bit string hash. */
function cyrb53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
