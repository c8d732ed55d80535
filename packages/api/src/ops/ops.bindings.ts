import type { Container } from 'inversify';
import type { Logger } from 'pino';
import {
  BullmqQueueInspector,
  createPdfRenderMetrics,
  EventLoopWatch,
  KnexWebhookEndpointRepository,
  MetricsPdfRenderer,
  registerFailingEndpointsGauge,
  registerQueueDepthGauge,
  registerReadReplicaMetrics,
  type ReadReplicas,
} from '@logi/adapters';
import type { AppConfig } from '@logi/config';
import type { AttachFilesUseCase, JobQueuePort, ManageExportsUseCase, OrderFilesUseCase, PdfRendererPort } from '@logi/domain';
import type { Knex } from 'knex';
import { Tokens } from '../tokens.js';
import { dependencyChecks } from './health/dependency-checks.js';
import { ReadinessChecker } from './health/readiness.checker.js';
import { ApiMetrics } from './metrics/api-metrics.js';
import { MetricsJobQueue } from './metrics/metrics-job.queue.js';
import { registerDependencyUpGauge } from './metrics/dependency-up.gauge.js';
import { countExportRefusals, countFileAccess, countUploadQuotaRefusals } from './metrics/use-case.metrics.js';

/** A scrape waits at most this long for the queue depth (and the failing endpoints); the other metrics are served either way. */
const QUEUE_DEPTH_TIMEOUT_MS = 1_000;

/**
 * Operations bindings of the API's composition root: metrics (one registry
 * per container), readiness, and metrics decorators around the job queue and
 * the PDF renderer, applied on activation so their own bindings stay as they are.
 * In the Redis profile, a queue inspector feeds the queue depth gauge and the dashboard.
 */
export function bindOps(c: Container, config: AppConfig, logger: Logger): void {
  c.bind(Tokens.QueueInspector).toDynamicValue(() =>
    config.redis
      ? new BullmqQueueInspector({
          redis: config.redis,
          prefix: config.redisPrefix,
          onError: (error) => logger.warn({ err: error }, 'queue inspector connection error'),
        })
      : null,
  );
  c.bind(Tokens.Metrics).toDynamicValue(() => {
    const metrics = new ApiMetrics({ pdfRender: createPdfRenderMetrics });
    const inspector = c.get<BullmqQueueInspector | null>(Tokens.QueueInspector);
    if (inspector) {
      registerQueueDepthGauge(metrics.registry, inspector, {
        timeoutMs: QUEUE_DEPTH_TIMEOUT_MS,
        onError: (error) => logger.warn({ err: error }, 'queue depth not collected'),
      });
    }
    const replicas = c.get<ReadReplicas | null>(Tokens.ReadReplicas);
    if (replicas) registerReadReplicaMetrics(metrics.registry, replicas);
    // Read from the primary at scrape time: the same number on every API process (alert on max).
    registerFailingEndpointsGauge(metrics.registry, new KnexWebhookEndpointRepository(c.get<Knex>(Tokens.Knex)), {
      timeoutMs: QUEUE_DEPTH_TIMEOUT_MS,
      onError: (error) => logger.warn({ err: error }, 'failing webhook endpoints not counted'),
    });
    registerDependencyUpGauge(metrics.registry, c.get<ReadinessChecker>(Tokens.Readiness));
    return metrics;
  });
  c.bind(Tokens.Readiness).toDynamicValue(
    () => new ReadinessChecker(dependencyChecks(c, config), logger, () => c.get<ReadReplicas | null>(Tokens.ReadReplicas)?.status() ?? null),
  );
  // Started when the health routes are built (at server start), stopped with the container's other resources.
  c.bind(Tokens.Liveness).toDynamicValue(() => new EventLoopWatch().start());
  c.onActivation<JobQueuePort>(Tokens.JobQueue, (_context, queue) => new MetricsJobQueue(queue, c.get<ApiMetrics>(Tokens.Metrics)));
  c.onActivation<PdfRendererPort>(Tokens.PdfRenderer, (_context, renderer) => new MetricsPdfRenderer(renderer, c.get<ApiMetrics>(Tokens.Metrics)));
  c.onActivation<OrderFilesUseCase>(Tokens.OrderFiles, (_context, useCase) => countFileAccess(useCase, c.get<ApiMetrics>(Tokens.Metrics)));
  c.onActivation<AttachFilesUseCase>(Tokens.AttachFiles, (_context, useCase) => countUploadQuotaRefusals(useCase, c.get<ApiMetrics>(Tokens.Metrics)));
  c.onActivation<ManageExportsUseCase>(Tokens.ManageExports, (_context, useCase) => countExportRefusals(useCase, c.get<ApiMetrics>(Tokens.Metrics)));
}
