import type { Container } from 'inversify';
import type { Logger } from 'pino';
import type { AppConfig } from '@logi/adapters';
import type { JobQueuePort, PdfRendererPort } from '@logi/domain';
import { Tokens } from '../tokens.js';
import { dependencyChecks } from './health/dependency-checks.js';
import { ReadinessChecker } from './health/readiness.checker.js';
import { ApiMetrics } from './metrics/api-metrics.js';
import { MetricsJobQueue } from './metrics/metrics-job.queue.js';
import { MetricsPdfRenderer } from './metrics/metrics-pdf.renderer.js';

/**
 * Operations bindings of the API's composition root: metrics (one registry
 * per container), readiness, and metrics decorators around the job queue and
 * the PDF renderer, applied on activation so their own bindings stay as they are.
 */
export function bindOps(c: Container, config: AppConfig, logger: Logger): void {
  c.bind(Tokens.Metrics).toDynamicValue(() => new ApiMetrics());
  c.bind(Tokens.Readiness).toDynamicValue(() => new ReadinessChecker(dependencyChecks(c, config), logger));
  c.onActivation<JobQueuePort>(Tokens.JobQueue, (_context, queue) => new MetricsJobQueue(queue, c.get<ApiMetrics>(Tokens.Metrics)));
  c.onActivation<PdfRendererPort>(Tokens.PdfRenderer, (_context, renderer) => new MetricsPdfRenderer(renderer, c.get<ApiMetrics>(Tokens.Metrics)));
}
