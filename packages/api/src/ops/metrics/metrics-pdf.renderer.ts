import type { InvoiceDocument, PdfRendererPort } from '@logi/domain';
import type { ApiMetrics } from './api-metrics.js';

/** Times each print of the in-process renderer; the adapter itself knows nothing of metrics. */
export class MetricsPdfRenderer implements PdfRendererPort {
  constructor(
    private readonly inner: PdfRendererPort,
    private readonly metrics: ApiMetrics,
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
