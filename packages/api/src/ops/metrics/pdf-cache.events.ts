import type { Logger } from 'pino';
import type { PdfCacheEvent } from '@logi/domain';
import type { ApiMetrics } from './api-metrics.js';

/**
 * What the PDF cache did on a download, counted in
 * `logistics_pdf_cache_requests_total`; a storage failure (the client still
 * got its PDF, by a render) is logged as a warning too.
 */
export function pdfCacheEvents(logger: Logger, metrics: () => ApiMetrics): (event: PdfCacheEvent) => void {
  return (event) => {
    metrics().pdfCacheRequests.inc({ outcome: event.outcome.replace('-', '_') });
    if ('error' in event) {
      const what = event.outcome === 'read-failed' ? 'could not be read; rendered instead' : 'could not be stored; served from the render';
      logger.warn({ requestId: event.requestId, key: event.key, error: event.error }, `cached PDF ${what}`);
    }
  };
}
