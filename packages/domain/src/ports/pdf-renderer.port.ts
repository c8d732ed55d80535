import type { InvoiceDocument } from '../invoices/invoice-document/invoice-document.js';

/** What a caller may tell one render. */
export interface RenderOptions {
  /**
   * Asked once the render holds a page, just before it prints: `false` gives the page back unprinted and the render
   * answers `null`. A caller that looks something up beside the wait for a page (is this PDF cached already?) drops
   * a render it no longer needs when the look ended first.
   */
  stillWanted?: () => boolean;
}

/** Prints a ready-to-show invoice document (labels translated, values formatted) as PDF. */
export interface PdfRendererPort {
  render(document: InvoiceDocument): Promise<Buffer>;
  /** `null`: `stillWanted` said no once a page was free, and nothing was printed. */
  render(document: InvoiceDocument, options: RenderOptions): Promise<Buffer | null>;
  /** Throws when the renderer (browser) cannot be started. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
