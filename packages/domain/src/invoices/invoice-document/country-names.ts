/**
 * Recognises a country named on an address line: by its name in a European
 * language or its own (CLDR, through Intl), by a common longer or older form
 * CLDR does not list, or by its ISO code. Case, accents and dots do not count,
 * so "ROMANIA", "România" and "Romania." name the same country.
 */

/** The languages whose country names an address line may be in: the documents' and those of the data's neighbours. */
const NAME_LOCALES = [
  'cs',
  'de',
  'en',
  'pl',
  'ro',
  'tr',
  'fr',
  'it',
  'es',
  'pt',
  'nl',
  'da',
  'sv',
  'fi',
  'hu',
  'sk',
  'sl',
  'hr',
  'bg',
  'el',
  'lt',
  'lv',
  'et',
  'uk',
  'ru',
];

/** Names seen on addresses that CLDR's one name per language leaves out (it says "Česko", "Czechia", "Türkiye"). */
const OTHER_NAMES: Record<string, string[]> = {
  CZ: ['Czech Republic', 'Česká republika', 'Tschechische Republik', 'Republika Czeska', 'Republica Cehă', 'Çek Cumhuriyeti'],
  TR: ['Turkey', 'Republic of Türkiye', 'Türkiye Cumhuriyeti'],
  GB: ['UK', 'Great Britain', 'Großbritannien', 'Velká Británie', 'Marea Britanie'],
  DE: ['Bundesrepublik Deutschland', 'Federal Republic of Germany', 'BRD'],
  NL: ['Holland', 'The Netherlands'],
  PL: ['Rzeczpospolita Polska', 'Republic of Poland'],
  US: ['USA', 'United States of America'],
};

const displayNames = new Map<string, Intl.DisplayNames>();
const namesByCode = new Map<string, Set<string>>();
let codesByName: Map<string, string | null> | null = null;

/** Whether `line` is nothing but a name (or the code) of the country `code`. */
export function namesCountry(line: string, code: string): boolean {
  return namesOf(code.toUpperCase()).has(comparable(line));
}

/** The ISO code of the country `line` names, or null when it names none (or more than one). */
export function countryNamedBy(line: string): string | null {
  codesByName ??= allNames();
  return codesByName.get(comparable(line)) ?? null;
}

/** Codes Intl names that are no country. */
const NOT_COUNTRIES = new Set(['EU', 'EZ', 'UN', 'QO', 'XA', 'XB', 'ZZ']);

/**
 * Whether `code` is a country's current ISO code as Intl knows it: not a
 * withdrawn one ("UK", "YU", which Intl maps to GB and RS) nor a grouping
 * ("EU", the prefix of the EU's non-union VAT scheme).
 */
export function isCountryCode(code: string): boolean {
  if (!/^[A-Z]{2}$/.test(code) || NOT_COUNTRIES.has(code) || nameIn('en', code) === undefined) return false;
  try {
    return new Intl.Locale(`und-${code}`).region === code;
  } catch {
    return false;
  }
}

function namesOf(code: string): Set<string> {
  let names = namesByCode.get(code);
  if (!names) {
    const own = ownLanguage(code);
    const locales = own && !NAME_LOCALES.includes(own) ? [...NAME_LOCALES, own] : NAME_LOCALES;
    const found = [code, ...(OTHER_NAMES[code] ?? []), ...locales.map((locale) => nameIn(locale, code))];
    names = new Set(found.filter((name): name is string => name !== undefined).map(comparable));
    namesByCode.set(code, names);
  }
  return names;
}

/** Built once, on the first address that names a country without a code beside it. */
function allNames(): Map<string, string | null> {
  const map = new Map<string, string | null>();
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  for (const first of letters) {
    for (const second of letters) {
      const code = first + second;
      if (!isCountryCode(code)) continue;
      for (const name of namesOf(code)) {
        // A name two countries share (in some language) names neither.
        map.set(name, map.has(name) && map.get(name) !== code ? null : code);
      }
    }
  }
  return map;
}

function nameIn(locale: string, code: string): string | undefined {
  let names = displayNames.get(locale);
  if (!names) {
    names = new Intl.DisplayNames(locale, { type: 'region', fallback: 'none' });
    displayNames.set(locale, names);
  }
  try {
    return names.of(code);
  } catch {
    return undefined;
  }
}

/** The language most likely spoken in the country (CLDR likely subtags), e.g. "ro" for RO. */
function ownLanguage(code: string): string | null {
  try {
    return new Intl.Locale(`und-${code}`).maximize().language;
  } catch {
    return null;
  }
}

function comparable(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/ı/g, 'i')
    .replace(/ł/g, 'l')
    .replace(/ß/g, 'ss')
    .replace(/ø/g, 'o')
    .replace(/\./g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
