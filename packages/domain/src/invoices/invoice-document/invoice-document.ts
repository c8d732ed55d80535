export const DOCUMENT_LANGUAGES = ['cs', 'de', 'en', 'pl', 'ro', 'tr'] as const;
export type DocumentLanguage = (typeof DOCUMENT_LANGUAGES)[number];

/**
 * An invoice ready to print: every label translated and every value
 * formatted for one language. Renderers only lay it out.
 */
export interface InvoiceDocument {
  lang: DocumentLanguage;
  /** Document title, e.g. "Invoice" or "Correcting invoice". */
  title: string;
  /** Present only on a duplicate copy, e.g. "DUPLICATE". */
  duplicateMark: string | null;
  number: string;
  labels: Record<string, string>;
  seller: { name: string; addressLines: string[]; vat: string; bankAccount: string; bankName: string };
  buyer: { name: string; addressLines: string[]; vat: string; country: string };
  dates: { issueDate: string; serviceDate: string; paymentTerm: string; paymentDate: string | null };
  items: Array<{
    position: number;
    name: string;
    quantity: string;
    unit: string;
    unitPriceNet: string;
    taxRate: string;
    amountNet: string;
    amountTax: string;
    amountGross: string;
  }>;
  totals: { net: string; tax: string; gross: string; paid: string; leftToPay: string };
  orders: Array<{ type: string; nr: string; cmr: string }>;
  correction: { nr: string } | null;
  currency: string;
  status: string;
}
