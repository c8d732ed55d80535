import type { Counter, Histogram } from 'prom-client';
import type { InvoiceDocument, PdfRendererPort } from '@logi/domain';

/** The two series each process that prints keeps (the API in the embedded profile, every worker). */
export interface PdfRenderMetrics {
  pdfRenderDuration: Histogram;
  pdfRenderFailures: Counter;
}

/** Times each print of this process's renderer; the renderer itself knows nothing of metrics. */
export class MetricsPdfRenderer implements PdfRendererPort {
  constructor(
    private readonly inner: PdfRendererPort,
    private readonly metrics: PdfRenderMetrics,
  ) {}

  async render(document: InvoiceDocument): Promise<Buffer> {
    const stopTimer = this.metrics.pdfRenderDuration.startTimer();
    try {
      return await this.inner.render(document);
    } catch (error) {
      this.metrics.pdfRenderFailures.inc();
      throw error;
    } finally {
      stopTimer();
    }
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
