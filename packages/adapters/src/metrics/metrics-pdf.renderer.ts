import { Counter, Histogram, type Registry } from 'prom-client';
import type { InvoiceDocument, PdfRendererPort, RenderOptions } from '@logi/domain';
import { DURATION_BUCKETS } from '@logi/config';

/** The two series each process that prints keeps (the API in the embedded profile, every worker). */
export interface PdfRenderMetrics {
  pdfRenderDuration: Histogram;
  pdfRenderFailures: Counter;
}

/** The print series on a process's registry: the API's (embedded profile) and every worker's. */
export function createPdfRenderMetrics(registry: Registry): PdfRenderMetrics {
  return {
    pdfRenderDuration: new Histogram({
      name: 'logistics_pdf_render_duration_seconds',
      help: 'Time Chromium took to print one invoice in this process.',
      buckets: [...DURATION_BUCKETS],
      registers: [registry],
    }),
    pdfRenderFailures: new Counter({
      name: 'logistics_pdf_render_failures_total',
      help: 'Invoice prints that failed in this process.',
      registers: [registry],
    }),
  };
}

/** Times each print of this process's renderer; the renderer itself knows nothing of metrics. */
export class MetricsPdfRenderer implements PdfRendererPort {
  constructor(
    private readonly inner: PdfRendererPort,
    private readonly metrics: PdfRenderMetrics,
  ) {}

  render(document: InvoiceDocument): Promise<Buffer>;
  render(document: InvoiceDocument, options: RenderOptions): Promise<Buffer | null>;
  async render(document: InvoiceDocument, options: RenderOptions = {}): Promise<Buffer | null> {
    const stopTimer = this.metrics.pdfRenderDuration.startTimer();
    try {
      const pdf = await this.inner.render(document, options);
      // A render its caller no longer wanted printed nothing: it is not a print's time.
      if (pdf) stopTimer();
      return pdf;
    } catch (error) {
      stopTimer();
      this.metrics.pdfRenderFailures.inc();
      throw error;
    }
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
