import { countryNamedBy, isCountryCode, namesCountry } from './country-names.js';
import type { InvoiceParty } from './invoice-document.js';
import type { InvoiceTranslation, VatIdLabels } from './invoice-translation.js';
import type { InvoiceValueFormatter } from './invoice-value.formatter.js';

/** Member states whose VAT ids VIES checks, by VAT prefix (Greece writes EL, Northern Ireland's traders XI). */
const EU_VAT_PREFIXES = new Set([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'EL',
  'ES',
  'FI',
  'FR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
  'XI',
]);

/** VAT prefixes that are not the country's ISO code (EU texts call Greece EL, so data given by them may too). */
const PREFIX_COUNTRIES: Record<string, string> = { EL: 'GR', XI: 'GB' };

export interface PartyData {
  name: string;
  /** Lines as stored; a last line may name the country, in any language (clients' systems write it so). */
  address: string;
  vat: string;
  /** ISO 3166-1 alpha-2 code as given with the data, any case; null or empty when not given. */
  country?: string | null;
}

/**
 * A party as printed. Its country is printed once, in the document's
 * language, under the address: the code given with the data, else the
 * country the address's last line names, else the VAT id's prefix (as the
 * e-invoice finds it). A last line that only names that country is left out of
 * the address, since the country line says it already; any other line stays.
 */
export function invoicePartyOf(party: PartyData, translation: InvoiceTranslation, format: InvoiceValueFormatter): InvoiceParty {
  const addressLines = linesOf(party.address);
  const last = addressLines.at(-1);
  const given = (party.country ?? '').trim().toUpperCase();
  const country = given !== '' ? (PREFIX_COUNTRIES[given] ?? given) : ((last === undefined ? null : countryNamedBy(last)) ?? countryOfVatId(party.vat));
  if (country !== null && last !== undefined && namesCountry(last, country)) addressLines.pop();
  return {
    name: party.name,
    addressLines,
    vat: party.vat,
    vatLabel: vatIdLabel(party.vat, country, translation.vatIds),
    country: country === null ? null : format.country(country),
  };
}

/**
 * The name a language gives this id: its domestic name only for an id of
 * that country (by prefix, else by the party's country: Polish and Turkish
 * ids are often written without one), the EU VAT name for another member
 * state's id, the general name for anything else.
 */
function vatIdLabel(vat: string, partyCountry: string | null, labels: VatIdLabels): string {
  const prefix = vatPrefix(vat);
  const country = prefix === null ? partyCountry : (PREFIX_COUNTRIES[prefix] ?? prefix);
  if (country !== null && country === labels.domesticCountry) return labels.domestic;
  const euPrefix = prefix ?? (country === 'GR' ? 'EL' : country);
  return euPrefix !== null && EU_VAT_PREFIXES.has(euPrefix) ? labels.eu : labels.other;
}

function countryOfVatId(vat: string): string | null {
  const prefix = vatPrefix(vat);
  return prefix === null ? null : (PREFIX_COUNTRIES[prefix] ?? prefix);
}

/** The two letters a VAT id starts with when they are a country's (or EL / XI). */
function vatPrefix(vat: string): string | null {
  const prefix = vat.trim().slice(0, 2).toUpperCase();
  return prefix in PREFIX_COUNTRIES || isCountryCode(prefix) ? prefix : null;
}

function linesOf(address: string): string[] {
  return address
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
