import { unitCodeOf } from '../e-invoice/e-invoice-defaults.js';
import { NAMED_UNIT_CODES, type NamedUnitCode } from './invoice-translation.js';
import { INVOICE_TRANSLATIONS } from './invoice-translations.js';

const NAMED = new Set<string>(NAMED_UNIT_CODES);

let printedWords: Map<string, NamedUnitCode> | null = null;

/**
 * The unit as this language prints it. What a unit is comes from its UN/ECE
 * Rec. 20 code: the one given with the item, else the code of the unit as
 * written, in any of the document languages (szt., Std., ore) or as the
 * e-invoice's unit table knows it. A unit with no word of its own in the
 * language (a symbol such as km; ldm, which the e-invoice can only call a
 * metre; one nobody knows) prints as given.
 */
export function unitName(unit: string, unitCode: string | null | undefined, words: Readonly<Record<NamedUnitCode, string>>): string {
  for (const code of [unitCode?.trim().toUpperCase(), codeOfWord(unit)]) {
    if (code !== undefined && NAMED.has(code)) return words[code as NamedUnitCode];
  }
  return unit;
}

function codeOfWord(unit: string): string {
  printedWords ??= new Map(
    Object.values(INVOICE_TRANSLATIONS).flatMap((translation) =>
      Object.entries(translation.units).map(([code, word]) => [key(word), code as NamedUnitCode] as const),
    ),
  );
  return printedWords.get(key(unit)) ?? unitCodeOf(unit);
}

/** As the e-invoice table reads a unit: case and a final dot do not count. */
function key(unit: string): string {
  return unit.trim().toLowerCase().replace(/\.$/, '');
}
