import type { InvoiceDetail } from '../invoices/invoice.js';
import type { InvoiceCriteria, InvoicePage } from '../invoices/invoice-criteria.js';

/** Invoices of one directory; ids of another directory behave as missing. */
export interface InvoiceRepositoryPort {
  /** One page of the invoices matching the criteria, and the count of all that match. */
  list(criteria: InvoiceCriteria): Promise<InvoicePage>;
  exists(directory: string, id: number): Promise<boolean>;
  findDetail(directory: string, id: number): Promise<InvoiceDetail | null>;
  /**
   * A value that changes on every write of the directory's invoices, their
   * rows or its client's company data (never back to an earlier value).
   */
  dataVersion(directory: string): Promise<string>;
}
