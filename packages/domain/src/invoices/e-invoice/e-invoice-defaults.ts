import { VAT_CATEGORIES, type VatCategory } from './e-invoice.js';

/**
 * Defaults for what EN 16931 needs and the fixture format does not carry.
 * Each can be given per row instead (optional fixture fields, docs/integrate/e-invoices.md#defaults-for-what-the-fixtures-do-not-hold):
 * `items[].unit_code`, `items[].tax_category`, `items[].tax_exemption_reason`,
 * `company.country`.
 */

/** A unit the table below does not know: "C62" (one), the unit of counting. */
export const DEFAULT_UNIT_CODE = 'C62';

/** Printed unit (lower case, without a final dot) -> UN/ECE Recommendation 20 code. */
const UNIT_CODES: Record<string, string> = {
  pcs: 'H87',
  pc: 'H87',
  piece: 'H87',
  pieces: 'H87',
  szt: 'H87',
  ks: 'H87',
  stk: 'H87',
  stück: 'H87',
  buc: 'H87',
  adet: 'H87',
  h: 'HUR',
  hr: 'HUR',
  hrs: 'HUR',
  hour: 'HUR',
  hours: 'HUR',
  godz: 'HUR',
  std: 'HUR',
  hod: 'HUR',
  ora: 'HUR',
  saat: 'HUR',
  day: 'DAY',
  days: 'DAY',
  d: 'DAY',
  dzień: 'DAY',
  tag: 'DAY',
  km: 'KMT',
  kg: 'KGM',
  t: 'TNE',
  m: 'MTR',
  ldm: 'MTR',
  m3: 'MTQ',
  pal: 'XPX',
  pallet: 'XPX',
  pallets: 'XPX',
  trip: 'E54',
  kurs: 'E54',
  tour: 'E54',
  fahrt: 'E54',
  service: 'C62',
  usł: 'C62',
  svc: 'C62',
};

/** A valid Rec. 20 code given with the item wins; otherwise the printed unit is looked up. */
export function unitCodeOf(unit: string, given?: string | null): string {
  if (given && /^[A-Z0-9]{1,3}$/.test(given.trim())) return given.trim();
  const key = unit.trim().toLowerCase().replace(/\.$/, '');
  return UNIT_CODES[key] ?? DEFAULT_UNIT_CODE;
}

const PERCENTAGE = /^\d{1,3}(?:[.,]\d{1,4})?$/;

/**
 * The VAT category of a tax rate as printed: a positive percentage is S
 * (standard), 0 is Z (zero rated), "zw" (exempt) is E, and "np" (not subject
 * to VAT where the seller is: the transport services of these invoices,
 * taxed by the buyer) is AE, reverse charge. EN 16931 forbids O ("outside
 * the scope") beside other categories and beside a seller VAT number, which
 * every invoice here has. A category given with the item wins.
 */
export function vatCategoryOf(taxRate: string, given?: string | null): { category: VatCategory; rate: number } {
  const rate = percentageOf(taxRate);
  const category = given ? (given.trim().toUpperCase() as VatCategory) : null;
  if (category && (VAT_CATEGORIES as readonly string[]).includes(category)) {
    return { category, rate: category === 'S' || category === 'L' || category === 'M' ? (rate ?? 0) : 0 };
  }
  const code = taxRate.trim().toLowerCase();
  if (code === 'zw') return { category: 'E', rate: 0 };
  if (code === 'np') return { category: 'AE', rate: 0 };
  if (rate !== null) return rate > 0 ? { category: 'S', rate } : { category: 'Z', rate: 0 };
  // An unknown code taxes nothing, and saying so is safer than inventing a rate.
  return { category: 'E', rate: 0 };
}

function percentageOf(taxRate: string): number | null {
  const code = taxRate.trim();
  return PERCENTAGE.test(code) ? Number(code.replace(',', '.')) : null;
}

/** Reason codes (CEF VATEX list) EN 16931 recommends beside the reason text. */
export function exemptionReasonCodeOf(category: VatCategory): string | null {
  switch (category) {
    case 'AE':
      return 'VATEX-EU-AE';
    case 'K':
      return 'VATEX-EU-IC';
    case 'G':
      return 'VATEX-EU-G';
    case 'O':
      return 'VATEX-EU-O';
    default:
      return null;
  }
}

/** When neither the company nor the VAT number says where the seller is. */
export const DEFAULT_COUNTRY = 'PL';

/**
 * ISO 3166-1 alpha-2 country: a valid code given wins, else the VAT number's
 * prefix (Greece writes EL there), else DEFAULT_COUNTRY.
 */
export function countryOf(given: string | null | undefined, vat: string): string {
  const code = (given ?? '').trim().toUpperCase();
  if (/^[A-Z]{2}$/.test(code)) return code;
  const prefix = vat.trim().slice(0, 2).toUpperCase();
  if (/^[A-Z]{2}$/.test(prefix)) return prefix === 'EL' ? 'GR' : prefix;
  return DEFAULT_COUNTRY;
}

/**
 * A printed address split as EN 16931 wants it: the first line is the
 * street, the line with a post code gives post code and city (both orders:
 * "80-001 Gdańsk", "Tilbury RM18 7EH"), lines between are an additional
 * street line, and a last line without digits after the city (the country's
 * name) is left out, since the country travels as a code. Without a post
 * code, the last line is the city.
 */
export function splitAddress(lines: string[]): { street: string | null; additionalStreet: string | null; city: string | null; postalCode: string | null } {
  const [street = null, ...rest] = lines;
  let city: string | null = null;
  let postalCode: string | null = null;
  const extra: string[] = [];
  for (const [index, line] of rest.entries()) {
    if (city === null) {
      const before = /^(\d{2}-\d{3}|\d{3} \d{2}|\d{4} ?[A-Z]{2}|[A-Z]{1,2}-?\d{4,5}|\d{4,6})\s+(\S.*)$/.exec(line);
      const after = /^(.*?\S)\s+([A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2})$/.exec(line);
      if (before) [postalCode, city] = [before[1]!, before[2]!];
      else if (after) [city, postalCode] = [after[1]!, after[2]!];
      else extra.push(line);
    } else if (!(index === rest.length - 1 && !/\d/.test(line))) {
      extra.push(line);
    }
  }
  // No line with a post code: the last line is the city.
  if (city === null) city = extra.pop() ?? null;
  return { street, additionalStreet: extra.length > 0 ? extra.join(', ') : null, city, postalCode };
}
