import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DURATION_BUCKETS } from '@logi/config';

export const FILE_DOWNLOAD_OUTCOMES = ['served', 'not_found', 'link_invalid', 'link_expired', 'link_revoked', 'unavailable', 'failed'] as const;
export const QUOTA_KINDS = ['upload_bytes', 'export_active', 'export_storage', 'export_invoices'] as const;

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

  readonly fileDownloads = new Counter({
    name: 'logistics_file_downloads_total',
    help: 'Order file downloads asked for, by kind (direct = the file route, link = a token link) and outcome (served, not_found, link_invalid, link_expired, link_revoked, unavailable, failed).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly fileLinksCreated = new Counter({
    name: 'logistics_file_links_created_total',
    help: 'Order file links made, by kind (presigned = a storage URL, token = a link to the API).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly quotaRefusals = new Counter({
    name: 'logistics_quota_refusals_total',
    help: 'Requests or files refused by a quota or limit, by kind (upload_bytes, export_active, export_storage, export_invoices).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  /** The print series, defined once for every process that prints (the root hands over their definition). */
  readonly pdfRenderDuration: Histogram;
  readonly pdfRenderFailures: Counter;

  constructor(options: { pdfRender: PdfRenderSeries; defaultMetrics?: boolean }) {
    ({ pdfRenderDuration: this.pdfRenderDuration, pdfRenderFailures: this.pdfRenderFailures } = options.pdfRender(this.registry));
    this.registry.setDefaultLabels({ service: 'api' });
    // Every series of a bounded label set exists from the start: a rate over it is 0 rather than absent.
    for (const kind of ['direct', 'link']) for (const outcome of FILE_DOWNLOAD_OUTCOMES) this.fileDownloads.inc({ kind, outcome }, 0);
    for (const kind of ['presigned', 'token']) this.fileLinksCreated.inc({ kind }, 0);
    for (const kind of QUOTA_KINDS) this.quotaRefusals.inc({ kind }, 0);
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }
}
