import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DURATION_BUCKETS } from '@logi/config';

/** Makes the PDF print series on a registry. */
export type PdfRenderSeries = (registry: Registry) => { pdfRenderDuration: Histogram; pdfRenderFailures: Counter };

/**
 * Every metric of one worker process, on a registry of its own (as the API's),
 * served on this process's METRICS_PORT. Job series carry the queue and the
 * job name, so one dashboard can split PDF renders from file stores.
 */
export class WorkerMetrics {
  readonly registry = new Registry();

  readonly jobDuration = new Histogram({
    name: 'logistics_worker_job_duration_seconds',
    help: 'Time a worker spent running one job attempt, by queue, job and outcome (completed, failed).',
    labelNames: ['queue', 'job', 'outcome'] as const,
    buckets: [...DURATION_BUCKETS],
    registers: [this.registry],
  });

  readonly jobFailures = new Counter({
    name: 'logistics_worker_job_failures_total',
    help: 'Job attempts that ended in an error, by queue, job and reason (unavailable = a dependency was down, else the error code).',
    labelNames: ['queue', 'job', 'reason'] as const,
    registers: [this.registry],
  });

  readonly jobsInProgress = new Gauge({
    name: 'logistics_worker_jobs_in_progress',
    help: 'Jobs this worker is running now, by queue and job.',
    labelNames: ['queue', 'job'] as const,
    registers: [this.registry],
  });

  /** The print series, defined once for every process that prints (the root hands over their definition). */
  readonly pdfRenderDuration: Histogram;
  readonly pdfRenderFailures: Counter;

  constructor(options: { pdfRender: PdfRenderSeries; defaultMetrics?: boolean }) {
    ({ pdfRenderDuration: this.pdfRenderDuration, pdfRenderFailures: this.pdfRenderFailures } = options.pdfRender(this.registry));
    this.registry.setDefaultLabels({ service: 'worker' });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }
}
