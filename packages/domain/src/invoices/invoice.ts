export const INVOICE_TYPES = ['s', 'c', 'p'] as const;
export type InvoiceType = (typeof INVOICE_TYPES)[number];

export const INVOICE_STATUSES = ['issued', 'paid', 'semipaid', 'overdue'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** An order related to an invoice; tasks, files and contacts are returned as given. */
export interface InvoiceOrder {
  type: string;
  nr: string;
  cmr: string;
  tasks: unknown[];
  files: unknown[];
  contacts: unknown[];
}

export interface InvoiceItem {
  name: string;
  quantity: number;
  unit: string;
  unitPriceNet: number;
  /** A percentage such as "23", or a code such as "np" (not subject) or "zw" (exempt). */
  taxRate: string;
  amountNet: number;
  amountTax: number;
  amountGross: number;
  /** UN/ECE Rec. 20 unit code for e-invoices; absent: derived from `unit` (see e-invoice-defaults). */
  unitCode?: string | null;
  /** EN 16931 VAT category (S, Z, E, AE, K, G, O, L, M); absent: derived from `taxRate`. */
  taxCategory?: string | null;
  /** Why the item is not taxed (BT-120); absent: the printed name of the tax code. */
  taxExemptionReason?: string | null;
}

/** All timestamps are Unix seconds, UTC. */
export interface Invoice {
  id: number;
  directory: string;
  nr: string;
  type: InvoiceType;
  status: InvoiceStatus;
  branchId: number;
  issueDate: number;
  serviceDate: number;
  paymentTerm: number;
  paymentDate: number | null;
  customerName: string;
  customerVat: string;
  customerCountry: string;
  currency: string;
  amountNet: number;
  amountTax: number;
  amountGross: number;
  paid: number;
  leftToPay: number;
  correctOf: { id: number; nr: string } | null;
  addedTime: number;
  orders: InvoiceOrder[];
}

/** An invoice with what only the PDF needs. */
export interface InvoiceDetail extends Invoice {
  customerAddress: string;
  items: InvoiceItem[];
  /** National e-invoices (fixtures-format.md); each absent when not given. ISO 3166-2, e.g. "RO-CJ". */
  customerCounty?: string;
  /** The buyer's reference (XRechnung's Leitweg-ID); when given, it is BT-10 instead of the order numbers. */
  buyerReference?: string;
  /** Units of the seller's national currency for one unit of `currency`. */
  exchangeRate?: number;
  /** The number the Polish KSeF gave this invoice. */
  ksefNumber?: string;
  /** A correction's corrected invoice: its issue date and KSeF number (FA(3) names both). */
  correctedInvoice?: { issueDate: number; ksefNumber: string | null };
}
