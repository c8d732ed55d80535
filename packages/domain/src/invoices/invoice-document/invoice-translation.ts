import type { InvoiceStatus, InvoiceType } from '../invoice.js';
import type { InvoiceLabels } from './invoice-document.js';

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
  correctionOf(nr: string): string;
  amountsIn(currency: string): string;
}
