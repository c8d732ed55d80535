export const DOCUMENT_LANGUAGES = ['cs', 'de', 'en', 'pl', 'ro', 'tr'] as const;
export type DocumentLanguage = (typeof DOCUMENT_LANGUAGES)[number];

/** Every fixed text printed on an invoice, in one language. */
export interface InvoiceLabels {
  seller: string;
  buyer: string;
  country: string;
  invoiceNumber: string;
  issueDate: string;
  serviceDate: string;
  paymentTerm: string;
  paymentDate: string;
  status: string;
  position: string;
  description: string;
  quantity: string;
  unit: string;
  unitPriceNet: string;
  netAmount: string;
  taxRate: string;
  taxAmount: string;
  grossAmount: string;
  total: string;
  taxSummary: string;
  totalNet: string;
  totalTax: string;
  totalGross: string;
  paid: string;
  leftToPay: string;
  relatedOrders: string;
  orderType: string;
  orderNr: string;
  cmr: string;
  payment: string;
  bankAccount: string;
  bankName: string;
  currency: string;
  page: string;
}

export interface InvoiceParty {
  name: string;
  /** The address as given, without a last line that only names the party's country (printed as `country`). */
  addressLines: string[];
  vat: string;
  /** What this document's language calls this VAT id, by the country that issued it, e.g. "NIP" or "NIP UE". */
  vatLabel: string;
  /** Country name in the document's language; null when not known. */
  country: string | null;
}

export interface InvoiceDocumentItem {
  position: number;
  name: string;
  quantity: string;
  /** The unit in the document's language when it is one the language has a word for, else as given. */
  unit: string;
  unitPriceNet: string;
  taxRate: string;
  amountNet: string;
  amountTax: string;
  amountGross: string;
}

/**
 * An invoice ready to print: every label translated and every value
 * formatted for one language. Renderers only lay it out; they never format.
 */
export interface InvoiceDocument {
  lang: DocumentLanguage;
  /** BCP 47 locale the values were formatted in, e.g. "pl-PL" (the HTML `lang`). */
  locale: string;
  /** Document title, e.g. "Invoice" or "Correcting invoice". */
  title: string;
  /** Present only on a duplicate copy, e.g. "DUPLICATE". */
  duplicateMark: string | null;
  number: string;
  labels: InvoiceLabels;
  seller: InvoiceParty;
  buyer: InvoiceParty;
  /** Where to pay; null when the account is not known (purchase invoices). */
  bank: { account: string; name: string } | null;
  dates: { issueDate: string; serviceDate: string; paymentTerm: string; paymentDate: string | null };
  /** Table amounts are plain numbers; `amountsIn` names their currency once. */
  items: InvoiceDocumentItem[];
  amountsIn: string;
  /** Net, tax and gross per tax rate, as tax law asks for. */
  taxSummary: Array<{ taxRate: string; net: string; tax: string; gross: string }>;
  /** Totals carry the currency, e.g. "1 450,00 €". */
  totals: { net: string; tax: string; gross: string; paid: string; leftToPay: string };
  orders: Array<{ type: string; nr: string; cmr: string }>;
  /** For a correcting invoice: the invoice it corrects, and the sentence that says so. */
  correction: { nr: string; text: string } | null;
  /**
   * For an invoice sent to KSeF: its KSeF number, printed under the verification QR code (KOD I) whose link is
   * `verificationUrl` (null when the invoice's FA(3) cannot be written, so there is nothing to verify against).
   */
  ksef: { number: string; verificationUrl: string | null } | null;
  currency: string;
  status: string;
}
