import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DURATION_BUCKETS } from '@logi/config';

/** Makes the PDF print series on a registry. */
export type PdfRenderSeries = (registry: Registry) => { pdfRenderDuration: Histogram; pdfRenderFailures: Counter };

/**
 * Every metric of one API process, on a registry of its own rather than
 * prom-client's global one, so that several servers (tests) can live in one
 * process without "already registered" clashes or mixed counts.
 */
export class ApiMetrics {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to response, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [...DURATION_BUCKETS],
    registers: [this.registry],
  });

  readonly rateLimitRejections = new Counter({
    name: 'http_rate_limit_rejections_total',
    help: 'Requests answered 429 Too Many Attempts, by route pattern.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  readonly uploadedBytes = new Counter({
    name: 'logistics_uploaded_bytes_total',
    help: 'Bytes of uploaded files that were stored for good.',
    registers: [this.registry],
  });

  readonly uploadedFiles = new Counter({
    name: 'logistics_uploaded_files_total',
    help: 'Uploaded files that passed validation, by outcome (stored, failed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'logistics_job_duration_seconds',
    help: 'Time the API waited for a job (queueing included), by job and outcome (completed, failed).',
    labelNames: ['job', 'outcome'] as const,
    buckets: [...DURATION_BUCKETS],
    registers: [this.registry],
  });

  readonly jobFailures = new Counter({
    name: 'logistics_job_failures_total',
    help: 'Jobs that ended in an error, by job and reason (unavailable = queue down or timed out, else the error code).',
    labelNames: ['job', 'reason'] as const,
    registers: [this.registry],
  });

  readonly orphanObjectsRemoved = new Counter({
    name: 'logistics_orphan_objects_removed_total',
    help: 'Objects under orders/ that no order_files row pointed at (older than the longest job deadline), removed by the housekeeping.',
    registers: [this.registry],
  });

  readonly pdfCacheRequests = new Counter({
    name: 'logistics_pdf_cache_requests_total',
    help: 'PDF downloads by what the cache did: hit, miss, not_modified (304), read_failed, store_failed.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly pdfCacheRemoved = new Counter({
    name: 'logistics_pdf_cache_removed_total',
    help: 'Cached PDFs removed by the housekeeping, by reason (age, count).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** The print series, defined once for every process that prints (the root hands over their definition). */
  readonly pdfRenderDuration: Histogram;
  readonly pdfRenderFailures: Counter;

  constructor(options: { pdfRender: PdfRenderSeries; defaultMetrics?: boolean }) {
    ({ pdfRenderDuration: this.pdfRenderDuration, pdfRenderFailures: this.pdfRenderFailures } = options.pdfRender(this.registry));
    this.registry.setDefaultLabels({ service: 'api' });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }
}
