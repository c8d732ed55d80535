import type { EInvoice, EInvoiceFormat } from '../invoices/e-invoice/e-invoice.js';

/** Writes EN 16931 documents: the XML in one syntax, and Factur-X (a PDF/A-3 with the CII XML inside). */
export interface EInvoiceWriterPort {
  /**
   * The version of what this writer produces for the same input (library
   * version and mapping revision); part of every e-invoice's ETag.
   */
  readonly version: string;
  /** The document as XML text (UTF-8). The same input always gives the same text. */
  xml(invoice: EInvoice, format: EInvoiceFormat): Promise<string>;
  /**
   * The printed PDF made PDF/A-3b, with `xml(invoice, 'cii')` embedded as
   * `factur-x.xml` (relationship Alternative, profile EN 16931), XMP metadata
   * that says what the document information dictionary says, an sRGB output
   * intent and a PDF 1.7 header.
   */
  facturX(pdf: Buffer, invoice: EInvoice): Promise<Buffer>;
}
