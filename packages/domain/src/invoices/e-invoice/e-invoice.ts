import type { DocumentLanguage } from '../invoice-document/invoice-document.js';

/** The XML syntaxes of EN 16931 the API writes: OASIS UBL 2.1 and UN/CEFACT CII D16B. */
export const EN16931_E_INVOICE_FORMATS = ['ubl', 'cii'] as const;
/**
 * National e-invoices (contract "National e-invoices"): XRechnung 3.0 in both syntaxes, Peppol BIS Billing 3.0 and
 * RO e-Factura CIUS-RO (UBL), and the Polish KSeF structure FA(3).
 */
export const NATIONAL_E_INVOICE_FORMATS = ['xrechnung-ubl', 'xrechnung-cii', 'peppol', 'cius-ro', 'ksef'] as const;
export const E_INVOICE_FORMATS = [...EN16931_E_INVOICE_FORMATS, ...NATIONAL_E_INVOICE_FORMATS] as const;
export type EInvoiceFormat = (typeof E_INVOICE_FORMATS)[number];
export type NationalEInvoiceFormat = (typeof NATIONAL_E_INVOICE_FORMATS)[number];

/** UNTDID 1001: 380 commercial invoice, 381 credit note. */
export type EInvoiceTypeCode = '380' | '381';

/**
 * UNTDID 5305 VAT category codes allowed by EN 16931: S standard rate, Z zero
 * rated, E exempt, AE reverse charge, K intra-community supply, G export
 * outside the EU, O outside the scope of VAT, L and M the Canary Islands and
 * Ceuta/Melilla taxes.
 */
export const VAT_CATEGORIES = ['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M'] as const;
export type VatCategory = (typeof VAT_CATEGORIES)[number];

/** A party as EN 16931 wants it (BG-4 seller, BG-7 buyer); the address is split from the printed lines. */
export interface EInvoiceParty {
  name: string;
  /** BT-31 / BT-48, as printed; null when the party has none. */
  vatId: string | null;
  /** ISO 3166-1 alpha-2, upper case (BT-40 / BT-55). */
  country: string;
  street: string | null;
  additionalStreet: string | null;
  city: string | null;
  postalCode: string | null;
  /** BT-39 / BT-54: ISO 3166-2 subdivision (e.g. "RO-CJ"); absent when not given. */
  county?: string;
  /** BG-6 / BG-9: the contact person; absent when not given. */
  contact?: { name: string; phone: string; email: string };
}

export interface EInvoiceLine {
  /** BT-126: the position printed on the PDF. */
  id: string;
  name: string;
  quantity: number;
  /** UN/ECE Recommendation 20 unit code (BT-130). */
  unitCode: string;
  /** BT-146, never negative: a negative price moves its sign to the quantity. */
  netPrice: number;
  netAmount: number;
  vatCategory: VatCategory;
  /** Percent; 0 for every category but S (and L, M). */
  vatRate: number;
}

export interface EInvoiceVatBreakdown {
  category: VatCategory;
  rate: number;
  taxableAmount: number;
  taxAmount: number;
  /** BT-120; required by EN 16931 for E, AE, K, G and O. */
  exemptionReason: string | null;
}

/**
 * One invoice as an EN 16931 document, syntax-neutral: raw values (amounts
 * rounded to cents, dates `YYYY-MM-DD` in the configured time zone) and the
 * texts of the printed document. Writers turn it into UBL or CII and never
 * decide anything themselves.
 */
export interface EInvoice {
  /** The language the texts (notes, payment terms) are in; the PDF's `lang`. */
  lang: DocumentLanguage;
  number: string;
  typeCode: EInvoiceTypeCode;
  issueDate: string;
  /** BT-9. */
  dueDate: string;
  /** BT-72: the service date printed on the PDF. */
  deliveryDate: string;
  currency: string;
  /** BT-22: e.g. the correction sentence of a correcting invoice. */
  notes: string[];
  /** BT-10: the related order numbers, as printed. */
  buyerReference: string | null;
  /** BT-16: the CMR numbers of the related orders. */
  despatchReference: string | null;
  /** BT-25: the invoice a credit note corrects. */
  precedingInvoice: string | null;
  seller: EInvoiceParty;
  buyer: EInvoiceParty;
  /** BG-16/BG-17: where to pay (credit transfer); null when the PDF prints no account. */
  payment: { iban: string; accountName: string; bankName: string } | null;
  /** BT-20. */
  paymentTerms: string;
  lines: EInvoiceLine[];
  vatBreakdown: EInvoiceVatBreakdown[];
  totals: {
    lineNet: number;
    taxExclusive: number;
    tax: number;
    taxInclusive: number;
    paid: number;
    payable: number;
  };
  /** What the national formats need beyond EN 16931; present only on a document written in one of them. */
  national?: EInvoiceNational;
}

/** The data of a national e-invoice that EN 16931 does not carry (fixtures-format.md, optional fields). */
export interface EInvoiceNational {
  /** BT-10 as given with the invoice (XRechnung's Leitweg-ID), not the order numbers; null when not given. */
  givenBuyerReference: string | null;
  /** The seller's national currency where the formats here need one: PLN for a Polish seller, RON for a Romanian one. */
  nationalCurrency: string | null;
  /** Units of `nationalCurrency` for one unit of `currency`; null when not given. */
  exchangeRate: number | null;
  /** The number KSeF gave this invoice; null when none. */
  ksefNumber: string | null;
  /** A correction's corrected invoice: its issue date (YYYY-MM-DD) and KSeF number. */
  corrected: { issueDate: string; ksefNumber: string | null } | null;
  /** When the invoice was made (FA(3) DataWytworzeniaFa): its added time, ISO 8601 UTC without milliseconds. */
  createdAt: string;
}
