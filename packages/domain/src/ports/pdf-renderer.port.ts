import type { InvoiceDocument } from '../invoices/invoice-document/invoice-document.js';

/** Prints a ready-to-show invoice document (labels translated, values formatted) as PDF. */
export interface PdfRendererPort {
  render(document: InvoiceDocument): Promise<Buffer>;
  /** Throws when the renderer (browser) cannot be started. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
