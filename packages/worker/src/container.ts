import 'reflect-metadata';
import { Container } from 'inversify';
import type { Logger } from 'pino';
import {
  buildJobHandlers,
  PublishEventsUseCase,
  DeliverWebhookUseCase,
  buildRunExport,
  type RunExportUseCase,
  type ClientRepositoryPort,
  type FileStoragePort,
  type InvoiceRepositoryPort,
  type JobHandlers,
  type OrderFileRepositoryPort,
  type PdfRendererPort,
  type WebhookDeliveryQueuePort,
} from '@logi/domain';
import {
  BullmqJobWorker,
  createFileStorage,
  runExportSettings,
  exportRunMetrics,
  createKnex,
  createPrimaryKnex,
  createPdfRenderer,
  EInvoiceEuWriter,
  EventLoopWatch,
  KnexClientRepository,
  KnexEventCapture,
  KnexWebhookDeliveryQueue,
  NodeWebhookSender,
  StandardWebhooksSigner,
  KnexWebhookSecretStore,
  createSecretCipher,
  checkStoredSecrets,
  KnexInvoiceRepository,
  createReadReplicas,
  registerReadReplicaMetrics,
  ReplicaClientRepository,
  ReplicaInvoiceRepository,
  type ReadReplicas,
  KnexOrderFileRepository,
  MetricsPdfRenderer,
  Sha256ContentHasher,
  invoiceTemplateVersion,
  createPdfRenderMetrics,
  QUEUE_NAME_BY_JOB,
  unavailableOnOutage,
  MinioFileStorage,
  startMetricsServer,
  startEventPublishing,
  startWebhookDelivering,
  startExportRunning,
  eventCaptureLagMetrics,
  webhookDeliveryMetrics,
  fairShareWaitMetrics,
  pdfJobStageMetrics,
  storeJobStageMetrics,
  BullmqJobQueue,
  KnexExportRepository,
} from '@logi/adapters';
import type { AppConfig, RedisEndpoint } from '@logi/config';
import { activeTelemetry } from '@logi/adapters/telemetry';
import type { WorkerProcessTasks } from './process-tasks.js';
import { WorkerTokens } from './tokens.js';
import { withJobMetrics } from './metrics/metrics-job.handlers.js';
import { WorkerMetrics } from './metrics/worker-metrics.js';

/**
 * The worker's composition root: the same job handlers as the API's
 * in-process mode, fed from a BullMQ queue. Nothing is built until asked
 * for, so importing this file starts nothing.
 */
export function buildWorkerContainer(config: AppConfig & { redis: RedisEndpoint }, logger: Logger): Container {
  const c = new Container({ defaultScope: 'Singleton' });
  const get = <T>(token: symbol) => c.get<T>(token);
  type Knex = ReturnType<typeof createKnex>;
  // Set when OTEL_* variables started tracing in this process (main.ts); null otherwise.
  const telemetry = activeTelemetry();

  c.bind(WorkerTokens.Config).toConstantValue(config);
  c.bind(WorkerTokens.Logger).toConstantValue(logger);
  c.bind(WorkerTokens.Knex).toDynamicValue(() => createPrimaryKnex(config, logger));
  // A render only reads: the invoice and its seller come from a replica when DATABASE_READ_URL names any (docs/operate/database-and-replicas.md#read-replicas-mariadb).
  c.bind(WorkerTokens.ReadReplicas).toDynamicValue(() => createReadReplicas(config, get<Knex>(WorkerTokens.Knex), logger));
  // The database adapters are bound wrapped: an outage leaves them as the domain's ServiceUnavailableError.
  const database = <T extends object>(adapter: T): T => unavailableOnOutage(adapter, 'database');
  c.bind(WorkerTokens.InvoiceRepository).toDynamicValue(() => {
    const read = get<ReadReplicas | null>(WorkerTokens.ReadReplicas);
    return database(read ? new ReplicaInvoiceRepository(read) : new KnexInvoiceRepository(get<Knex>(WorkerTokens.Knex)));
  });
  c.bind(WorkerTokens.ClientRepository).toDynamicValue(() => {
    const read = get<ReadReplicas | null>(WorkerTokens.ReadReplicas);
    return database(read ? new ReplicaClientRepository(read) : new KnexClientRepository(get<Knex>(WorkerTokens.Knex)));
  });
  c.bind(WorkerTokens.OrderFileRepository).toDynamicValue(() => database(new KnexOrderFileRepository(get<Knex>(WorkerTokens.Knex))));
  // Not wrapped: storage raises its own StorageError, whose message the domain shows per file.
  c.bind(WorkerTokens.FileStorage).toDynamicValue(() => createFileStorage(config));
  c.bind(WorkerTokens.PdfRenderer).toDynamicValue(() => {
    // A worker that takes only exports' renders keeps no page for interactive ones (ADR 0053).
    const renderer = createPdfRenderer(config, { bulkOnly: !config.workerQueues.includes('pdf') });
    return telemetry ? telemetry.traceRenderer(renderer) : renderer;
  });
  c.bind(WorkerTokens.JobHandlers).toDynamicValue(() =>
    buildJobHandlers({
      invoices: get<InvoiceRepositoryPort>(WorkerTokens.InvoiceRepository),
      clients: get<ClientRepositoryPort>(WorkerTokens.ClientRepository),
      files: get<OrderFileRepositoryPort>(WorkerTokens.OrderFileRepository),
      renderer: get<PdfRendererPort>(WorkerTokens.PdfRenderer),
      storage: get<FileStoragePort>(WorkerTokens.FileStorage),
      hasher: new Sha256ContentHasher(),
      templateVersion: invoiceTemplateVersion(),
      timeZone: config.timeZone,
      // Factur-X is made where the PDF is rendered: here, in the production profile.
      eInvoiceWriter: new EInvoiceEuWriter(),
      // Where a render job's time goes: data, cache look-up, wait for a page, render, store (ADR 0054).
      onPdfStage: pdfJobStageMetrics(get<WorkerMetrics>(WorkerTokens.Metrics).registry),
      // Where an upload's store job goes: the row's commit (and, on a run that is not its first, the look-up and HEAD before).
      onStoreStage: storeJobStageMetrics(get<WorkerMetrics>(WorkerTokens.Metrics).registry),
    }),
  );
  // One registry per container; the renderer and the handlers are timed on activation, so their bindings stay as they are.
  c.bind(WorkerTokens.Metrics).toDynamicValue(() => {
    const metrics = new WorkerMetrics({ pdfRender: createPdfRenderMetrics });
    const replicas = get<ReadReplicas | null>(WorkerTokens.ReadReplicas);
    if (replicas) registerReadReplicaMetrics(metrics.registry, replicas);
    return metrics;
  });
  c.onActivation<PdfRendererPort>(WorkerTokens.PdfRenderer, (_context, renderer) => new MetricsPdfRenderer(renderer, get<WorkerMetrics>(WorkerTokens.Metrics)));
  c.onActivation<JobHandlers>(WorkerTokens.JobHandlers, (_context, handlers) =>
    withJobMetrics(handlers, get<WorkerMetrics>(WorkerTokens.Metrics), QUEUE_NAME_BY_JOB),
  );
  c.bind(WorkerTokens.JobWorker).toDynamicValue(
    () =>
      new BullmqJobWorker({
        redis: config.redis,
        prefix: config.redisPrefix,
        handlers: get<JobHandlers>(WorkerTokens.JobHandlers),
        concurrency: config.workerConcurrency,
        // WORKER_QUEUES: the BullMQ queues among them (docs/contribute/decisions/0053-worker-pools.md).
        queues: config.workerQueues,
        lockDurationMs: config.jobLockMs,
        logger,
        telemetry: telemetry?.bullmq,
        onFirstStart: fairShareWaitMetrics(get<WorkerMetrics>(WorkerTokens.Metrics).registry),
      }),
  );
  c.bind(WorkerTokens.EventLoop).toDynamicValue(() => new EventLoopWatch().start());
  // Workers publish captured changes as events too, so events flow while API processes are busy or few.
  c.bind(WorkerTokens.PublishEvents).toDynamicValue(
    () =>
      new PublishEventsUseCase({
        capture: database(
          new KnexEventCapture(get<Knex>(WorkerTokens.Knex), {
            onUnreadable: (invoiceId, reason) =>
              logger.warn({ invoiceId, reason }, 'an invoice row the list cannot show was changed; no event for this change'),
            onPublished: eventCaptureLagMetrics(get<WorkerMetrics>(WorkerTokens.Metrics).registry),
          }),
        ),
      }),
  );
  // Workers deliver webhooks in the production profile, on slots of their own beside the job queue's.
  c.bind(WorkerTokens.WebhookDeliveryQueue).toDynamicValue(() => database(new KnexWebhookDeliveryQueue(get<Knex>(WorkerTokens.Knex))));
  c.bind(WorkerTokens.SecretCipher).toDynamicValue(() => createSecretCipher(config));
  c.bind(WorkerTokens.DeliverWebhook).toDynamicValue(
    () =>
      new DeliverWebhookUseCase({
        sender: new NodeWebhookSender({ maxSocketsPerOrigin: config.webhooks.concurrency }),
        signer: new StandardWebhooksSigner(),
        cipher: get<ReturnType<typeof createSecretCipher>>(WorkerTokens.SecretCipher),
        settings: config.webhooks,
        nowSeconds: () => Math.floor(Date.now() / 1000),
      }),
  );
  // Exports are made here in the production profile (WORKER_QUEUES with `exports`); their renders go on the `pdf-bulk`
  // queue, and any worker that takes it (this one included, if it does) runs them.
  c.bind(WorkerTokens.JobQueue).toDynamicValue(
    () =>
      new BullmqJobQueue({
        redis: config.redis,
        prefix: config.redisPrefix,
        onError: (error) => logger.warn({ err: error }, 'job queue connection error'),
        telemetry: telemetry?.bullmq,
      }),
  );
  c.bind(WorkerTokens.RunExport).toDynamicValue(() => {
    const eInvoiceWriter = new EInvoiceEuWriter();
    return buildRunExport({
      exports: database(new KnexExportRepository(get<Knex>(WorkerTokens.Knex))),
      invoices: get<InvoiceRepositoryPort>(WorkerTokens.InvoiceRepository),
      clients: get<ClientRepositoryPort>(WorkerTokens.ClientRepository),
      storage: get<FileStoragePort>(WorkerTokens.FileStorage),
      queue: get<BullmqJobQueue>(WorkerTokens.JobQueue),
      hasher: new Sha256ContentHasher(),
      eInvoiceWriter,
      ...runExportSettings(config, logger),
      observer: exportRunMetrics(get<WorkerMetrics>(WorkerTokens.Metrics).registry),
    });
  });
  c.bind(WorkerTokens.ProcessTasks).toDynamicValue((): WorkerProcessTasks => ({
    checkSecretKeys: async () => {
      const cipher = get<ReturnType<typeof createSecretCipher>>(WorkerTokens.SecretCipher);
      const result = await checkStoredSecrets(new KnexWebhookSecretStore(get<Knex>(WorkerTokens.Knex)), cipher, config);
      if (result.sealedPlain > 0)
        logger.info({ sealed: result.sealedPlain, keyId: cipher.keyIds[0] }, 'sealed the webhook secrets a release before encryption stored in clear');
    },
    prepareStorage: async () => {
      const storage = get<FileStoragePort>(WorkerTokens.FileStorage);
      if (storage instanceof MinioFileStorage) await storage.init();
    },
    startMetricsListener: (health) => startMetricsServer(get<WorkerMetrics>(WorkerTokens.Metrics), config.metrics, logger, health),
    startEventPublishing: () =>
      startEventPublishing({ publish: get<PublishEventsUseCase>(WorkerTokens.PublishEvents), intervalMs: config.events.publishIntervalMs, logger }),
    startExportRunning: () => startExportRunning({ run: get<RunExportUseCase>(WorkerTokens.RunExport), intervalMs: 500, logger }),
    startWebhookDelivering: () =>
      startWebhookDelivering({
        deliver: get<DeliverWebhookUseCase>(WorkerTokens.DeliverWebhook),
        queue: get<WebhookDeliveryQueuePort>(WorkerTokens.WebhookDeliveryQueue),
        concurrency: config.webhooks.concurrency,
        perEndpoint: config.webhooks.concurrencyPerEndpoint,
        perDirectory: config.webhooks.maxInFlightPerDirectory,
        attemptTimeoutMs: config.webhooks.timeoutMs,
        intervalMs: config.events.publishIntervalMs,
        logger,
        observer: webhookDeliveryMetrics(get<WorkerMetrics>(WorkerTokens.Metrics).registry),
      }),
  }));
  return c;
}
