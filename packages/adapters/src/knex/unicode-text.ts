/**
 * Text folding and sort keys for the SQLite profile, registered as SQL
 * functions (`ufold`, `usortkey`), so that SQLite matches and orders text the
 * way MariaDB/MySQL do with utf8mb4_unicode_ci. SQLite's own LIKE and lower()
 * fold only ASCII, and its only text order is by code point.
 */

const COMBINING_MARKS = /\p{Mn}/gu;

/**
 * Case- and accent-insensitive form of a text, for literal substring and
 * equality tests (`ŁÓDŹ` and `Łódź` both become `łodz`). utf8mb4_unicode_ci
 * ignores case and accents too, so both profiles answer alike.
 */
export function foldText(value: string): string {
  return value.normalize('NFD').replace(COMBINING_MARKS, '').toLowerCase().normalize('NFC');
}

/**
 * ASCII characters in the order utf8mb4_unicode_ci gives them (read from
 * MariaDB 10.11: ORDER BY over CHAR(32..126)); letters appear once, folded.
 */
const UCA_ASCII_ORDER = ' `^_-,;:!?.\'"()[]{}@*/\\&#%+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz';

/** Gaps of 4 leave room for letters that sort right after an ASCII letter (ł after l). */
const WEIGHT_BASE = 0x30;
const WEIGHT_STEP = 4;
const ASCII_WEIGHTS = new Map<string, string>([...UCA_ASCII_ORDER].map((char, rank) => [char, String.fromCharCode(WEIGHT_BASE + rank * WEIGHT_STEP)]));

/** Letters that keep a primary weight of their own in UCA and do not decompose in NFD. */
const AFTER_LETTER: Record<string, string> = { ł: 'l', đ: 'd', ø: 'o', ı: 'i', ħ: 'h', ŧ: 't' };
const EXPANSIONS: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe' };

/** Weights above every ASCII weight; the character itself then orders the rest by code point. */
const OTHER_PREFIX = '\u0200';

/**
 * A string whose binary (code point) order is utf8mb4_unicode_ci's order: exact
 * for ASCII, close for Latin letters with diacritics. Trailing spaces are
 * dropped (PAD SPACE) and control characters ignored, as in MariaDB.
 */
export function textSortKey(value: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this drops from the sort key
  const controls = /[\u0000-\u001f\u007f]/g;
  const folded = foldText(value)
    .replace(controls, '')
    .replace(/(?<! ) +$/, '');
  let key = '';
  for (const char of folded) {
    const ascii = ASCII_WEIGHTS.get(char);
    if (ascii !== undefined) {
      key += ascii;
      continue;
    }
    const expansion = EXPANSIONS[char];
    if (expansion !== undefined) {
      key += [...expansion].map((c) => ASCII_WEIGHTS.get(c)!).join('');
      continue;
    }
    const base = AFTER_LETTER[char];
    if (base !== undefined) {
      key += String.fromCharCode(ASCII_WEIGHTS.get(base)!.charCodeAt(0) + 1);
      continue;
    }
    key += OTHER_PREFIX + char;
  }
  return key;
}
