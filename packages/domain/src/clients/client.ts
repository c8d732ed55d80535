/** The seller printed on a client's invoice PDFs. */
export interface CompanyDetails {
  name: string;
  address: string;
  vat: string;
  bankAccount: string;
  bankName: string;
  /** ISO 3166-1 alpha-2 code for e-invoices; absent: the VAT number's prefix. */
  country?: string | null;
  /** National e-invoices: the seller's contact person (XRechnung requires one); absent when not given. */
  contact?: { name: string; phone: string; email: string };
  /** National e-invoices: ISO 3166-2 subdivision, e.g. "RO-CJ"; absent when not given. */
  county?: string;
}

/** A client system: one directory that owns its orders, invoices and files. */
export interface Client {
  id: number;
  directory: string;
  name: string;
  company: CompanyDetails;
}

/** A client as stored, with the hash of its API key (never the key itself). */
export interface ClientWithKey extends Client {
  apiKeyHash: string;
}
