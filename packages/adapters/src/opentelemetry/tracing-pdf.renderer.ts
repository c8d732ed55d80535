import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { InvoiceDocument, PdfRendererPort, RenderOptions } from '@logi/domain';

/**
 * Each print as a span, child of the job's (or, in the embedded profile, the
 * request's): Chromium's share of a slow PDF. No instrumentation knows the
 * browser's pipe, so this is the one span the code starts itself.
 */
export class TracingPdfRenderer implements PdfRendererPort {
  constructor(
    private readonly inner: PdfRendererPort,
    private readonly tracer: Tracer,
  ) {}

  render(document: InvoiceDocument): Promise<Buffer>;
  render(document: InvoiceDocument, options: RenderOptions): Promise<Buffer | null>;
  render(document: InvoiceDocument, options: RenderOptions = {}): Promise<Buffer | null> {
    return this.tracer.startActiveSpan(
      'chromium render',
      { attributes: { 'invoice.language': document.lang, 'invoice.items': document.items.length } },
      async (span) => {
        try {
          const pdf = await this.inner.render(document, options);
          // Null: the caller's look-up found the PDF while this render waited for a page, and nothing was printed.
          span.setAttribute('pdf.bytes', pdf?.length ?? 0);
          if (!pdf) span.setAttribute('pdf.skipped', true);
          return pdf;
        } catch (error) {
          span.recordException(error instanceof Error ? error : String(error));
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
          throw error;
        } finally {
          span.end();
        }
      },
    );
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
