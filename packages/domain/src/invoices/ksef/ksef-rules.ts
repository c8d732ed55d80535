import type { VatCategory } from '../e-invoice/e-invoice.js';

/** The ten digits of a Polish NIP written as `PL5860000002`, `586-000-00-02` or `5860000002`; null when it is none. */
export function nipOf(vat: string): string | null {
  const digits = vat.trim().replace(/^PL/i, '').replace(/[\s-]/g, '');
  return /^\d{10}$/.test(digits) ? digits : null;
}

/** The NIP check digit (weights 6 5 7 2 3 4 5 6 7, modulo 11; 10 is never valid), as KSeF checks it. */
export function isPolishNip(nip: string): boolean {
  if (!/^[1-9]((\d[1-9])|([1-9]\d))\d{7}$/.test(nip)) return false;
  const weights = [6, 5, 7, 2, 3, 4, 5, 6, 7];
  const sum = weights.reduce((total, weight, index) => total + weight * Number(nip[index]), 0) % 11;
  return sum !== 10 && sum === Number(nip[9]);
}

/** Countries FA(3) names with `KodUE` + `NrVatUE` (its TKodyKrajowUE: the EU, Greece as EL, Northern Ireland as XI). */
export const FA3_EU_PREFIXES: ReadonlySet<string> = new Set([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DK',
  'EE',
  'FI',
  'FR',
  'DE',
  'EL',
  'HR',
  'HU',
  'IE',
  'IT',
  'LV',
  'LT',
  'LU',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SK',
  'SI',
  'ES',
  'SE',
  'XI',
]);

/** The VAT categories FA(3) has fields for; L and M (Canary Islands, Ceuta and Melilla) have none. */
export const FA3_TAX_FIELDS: Readonly<Partial<Record<VatCategory, true>>> = { S: true, Z: true, E: true, AE: true, K: true, G: true, O: true };

/**
 * Where a line's tax goes in FA(3): `slot` names the P_13_x / P_14_x pair of the invoice's sums, `rate` is the
 * line's P_12 (or `ossRate`, its P_12_XII, for a foreign rate charged under the OSS procedure). "Not subject" (AE)
 * is domestic reverse charge ("oo") for a Polish buyer, art. 100 (np II) for a buyer in the EU, np I elsewhere.
 */
export function fa3TaxOf(category: VatCategory, rate: number, buyerCountry: string): { slot: string; rate?: string; ossRate?: number } {
  switch (category) {
    case 'S':
      if (rate === 23 || rate === 22) return { slot: '1', rate: String(rate) };
      if (rate === 8 || rate === 7) return { slot: '2', rate: String(rate) };
      if (rate === 5) return { slot: '3', rate: '5' };
      if (rate === 4 || rate === 3) return { slot: '4', rate: String(rate) };
      return { slot: '5', ossRate: rate };
    case 'Z':
      return { slot: '6_1', rate: '0 KR' };
    case 'K':
      return { slot: '6_2', rate: '0 WDT' };
    case 'G':
      return { slot: '6_3', rate: '0 EX' };
    case 'E':
      return { slot: '7', rate: 'zw' };
    case 'AE':
      if (buyerCountry === 'PL') return { slot: '10', rate: 'oo' };
      return FA3_EU_PREFIXES.has(buyerCountry === 'GR' ? 'EL' : buyerCountry) ? { slot: '9', rate: 'np II' } : { slot: '8', rate: 'np I' };
    default:
      return { slot: '8', rate: 'np I' };
  }
}

/**
 * A KSeF number as KSeF gives it: `NIP-YYYYMMDD-` twelve hex digits `-` the CRC-8 (polynomial 0x07, initial 0) of
 * the 32 characters before it, 35 characters in all (CIRFMF/ksef-docs, faktury/numer-ksef.md).
 */
export function isKsefNumber(value: string): boolean {
  const match = /^(\d{10}-\d{8}-[0-9A-F]{12})-([0-9A-F]{2})$/.exec(value);
  if (!match) return false;
  let crc = 0;
  for (const char of match[1]!) {
    crc ^= char.charCodeAt(0);
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  return crc === parseInt(match[2]!, 16);
}

/** KSeF refuses an invoice file over 1 MB (1,000,000 bytes) without attachments. */
export const KSEF_MAX_BYTES = 1_000_000;

/** The Ministry's address for KOD I on a printed invoice (production; `qr-test.` and `qr-demo.` are the test systems). */
export const KSEF_QR_BASE_URL = 'https://qr.ksef.mf.gov.pl';

/**
 * KOD I, the verification link printed as a QR code on an invoice sent to KSeF: the seller's NIP, the issue date
 * (P_1) as DD-MM-YYYY and the SHA-256 of the invoice file in Base64URL (CIRFMF/ksef-docs, kody-qr.md).
 */
export function ksefVerificationUrl(nip: string, issueDate: string, sha256Hex: string): string {
  const [year, month, day] = issueDate.split('-');
  return `${KSEF_QR_BASE_URL}/invoice/${nip}/${day}-${month}-${year}/${base64UrlOfHex(sha256Hex)}`;
}

function base64UrlOfHex(hex: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const bytes = hex.match(/../g)!.map((pair) => parseInt(pair, 16));
  let out = '';
  for (let index = 0; index < bytes.length; index += 3) {
    const [a, b, c] = [bytes[index]!, bytes[index + 1], bytes[index + 2]];
    const triple = (a << 16) | ((b ?? 0) << 8) | (c ?? 0);
    out += alphabet[(triple >> 18) & 63]! + alphabet[(triple >> 12) & 63]!;
    if (b !== undefined) out += alphabet[(triple >> 6) & 63]!;
    if (c !== undefined) out += alphabet[triple & 63]!;
  }
  return out;
}
