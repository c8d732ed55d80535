import type { InvoiceStatus, InvoiceType } from '../invoice.js';
import type { InvoiceLabels } from './invoice-document.js';

/**
 * The units a language has its own word for, by UN/ECE Recommendation 20 code
 * (the e-invoice's unit codes): piece, hour, day, pallet, trip. Symbols (km,
 * kg, t, m, m³) read alike in every language and print as given.
 */
export const NAMED_UNIT_CODES = ['H87', 'HUR', 'DAY', 'XPX', 'E54'] as const;
export type NamedUnitCode = (typeof NAMED_UNIT_CODES)[number];

/** How invoices in one language label a VAT id, by the country that issued it. */
export interface VatIdLabels {
  /** The country whose own ids have a name of their own in this language (ISO 3166-1 alpha-2); null when none has. */
  domesticCountry: string | null;
  /** The name of an id of domesticCountry, e.g. "NIP". */
  domestic: string;
  /** An EU VAT id of another member state (one that VIES checks). */
  eu: string;
  /** Any other id, or one whose country is not known. */
  other: string;
}

/** What one language needs to print an invoice: fixed texts plus the sentences that take a value. */
export interface InvoiceTranslation {
  /** Intl locale for dates, numbers and country names. */
  locale: string;
  titles: Record<InvoiceType, string>;
  duplicate: string;
  statuses: Record<InvoiceStatus, string>;
  /** Tax rate codes that are not percentages: `np` not subject to VAT, `zw` exempt. */
  taxCodes: { np: string; zw: string };
  labels: InvoiceLabels;
  vatIds: VatIdLabels;
  /** The unit word an invoice in this language prints in its unit column. */
  units: Record<NamedUnitCode, string>;
  correctionOf(nr: string): string;
  amountsIn(currency: string): string;
}
