import 'reflect-metadata';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Container } from 'inversify';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import {
  AttachFilesUseCase,
  AuthenticateClientUseCase,
  DownloadInvoicePdfUseCase,
  DownloadEInvoiceUseCase,
  type EInvoiceWriterPort,
  RecentPdfs,
  FindOrderByNrUseCase,
  ListFileCategoriesUseCase,
  ListInvoicesUseCase,
  ListEventsUseCase,
  PublishEventsUseCase,
  ManageWebhookEndpointsUseCase,
  OrderFilesUseCase,
  DeliverWebhookUseCase,
  ManageExportsUseCase,
  buildRunExport,
  type RunExportUseCase,
  type ExportRepositoryPort,
  type EventCapturePort,
  type EventFeedPort,
  buildJobHandlers,
  type ContentHasherPort,
  type ApiKeyHasherPort,
  type ClientRepositoryPort,
  type ClockPort,
  type FileCategoryRepositoryPort,
  type FileStoragePort,
  type IdempotencyStorePort,
  type UploadQuotaPort,
  type InvoiceRepositoryPort,
  type JobHandlers,
  type JobQueuePort,
  type OrderFileRepositoryPort,
  type OrderRepositoryPort,
  type PdfRendererPort,
  type WebhookDeliveryQueuePort,
  type SecretCipherPort,
} from '@logi/domain';
import {
  BullmqJobQueue,
  createFileStorage,
  runExportSettings,
  exportRunMetrics,
  HmacFileLinkSigner,
  loadFileLinkKey,
  createPrimaryKnex,
  createPdfRenderer,
  EInvoiceEuWriter,
  FileTypeSniffer,
  createRedis,
  InlineJobQueue,
  KnexClientRepository,
  KnexApiKeyRepository,
  KnexFileCategoryRepository,
  KnexIdempotencyStore,
  KnexInvoiceRepository,
  createReadReplicas,
  ReplicaClientRepository,
  ReplicaEventFeed,
  ReplicaInvoiceRepository,
  ReplicaOrderRepository,
  type ReadReplicas,
  KnexEventCapture,
  KnexEventFeed,
  KnexWebhookEndpointRepository,
  KnexWebhookDeliveryQueue,
  StandardWebhooksSigner,
  NodeWebhookSender,
  KnexWebhookSecretStore,
  KnexWebhookTargetPolicy,
  createSecretCipher,
  checkStoredSecrets,
  type AesGcmSecretCipher,
  DnsHostResolver,
  KnexOrderFileRepository,
  KnexUploadQuotaRepository,
  KnexOrderRepository,
  RedisIdempotencyStore,
  Sha256ApiKeyHasher,
  Sha256ContentHasher,
  invoiceTemplateVersion,
  unavailableOnOutage,
  whenRedisReady,
  startMetricsServer,
  startEventPublishing,
  startWebhookDelivering,
  startExportRunning,
  eventCaptureLagMetrics,
  webhookDeliveryMetrics,
  pdfJobStageMetrics,
  storeJobStageMetrics,
  KnexExportRepository,
  startPeriodic,
  sweepTempFiles,
  indexPendingDocuments,
} from '@logi/adapters';
import type { AppConfig } from '@logi/config';
import { activeTelemetry } from '@logi/adapters/telemetry';
import { RateLimiter } from './middleware/rate-limiter.js';
import { MultipartUploadReceiver } from './uploads/multipart-upload.receiver.js';
import type { ApiProcessTasks } from './process-tasks.js';
import { Tokens } from './tokens.js';
import { bindOps } from './ops/ops.bindings.js';
import type { ApiMetrics } from './ops/metrics/api-metrics.js';
import { pdfCacheEvents } from './ops/metrics/pdf-cache.events.js';
import { fileContentDisposition } from './http/content-disposition.js';

/** Downloads whose printed version each API process remembers (about 300 bytes each). */
const RECENT_DOWNLOADS = 50_000;

/** How often an idle runner looks for a waiting export. */
const EXPORT_POLL_MS = 500;

/**
 * The API's composition root. Embedded profile by default (SQLite, local
 * files, jobs in this process); MariaDB, Redis and MinIO when configured.
 */
export function buildContainer(config: AppConfig, logger: Logger): Container {
  const c = new Container({ defaultScope: 'Singleton' });
  const get = <T>(token: symbol) => c.get<T>(token);
  // Set when OTEL_* variables started tracing in this process (main.ts); null otherwise.
  const telemetry = activeTelemetry();

  c.bind(Tokens.Config).toConstantValue(config);
  c.bind(Tokens.Logger).toConstantValue(logger);
  c.bind(Tokens.Clock).toConstantValue({ now: () => new Date() } satisfies ClockPort);
  c.bind(Tokens.Knex).toDynamicValue(() => createPrimaryKnex(config, logger));
  c.bind(Tokens.Redis).toDynamicValue(() =>
    config.redis
      ? createRedis(config.redis, {
          role: 'client',
          connectionName: `${config.redisPrefix}:api-ratelimit`,
          commandTimeoutMs: 500,
          onError: (error) => logger.warn({ err: error }, 'rate limit Redis connection error'),
        })
      : null,
  );

  // The database adapters are bound wrapped: a refused connection or a lock timeout is the domain's
  // ServiceUnavailableError (503 + Retry-After) when it leaves the adapter.
  const database = <T extends object>(adapter: T): T => unavailableOnOutage(adapter, 'database');
  c.bind(Tokens.ClientRepository).toDynamicValue(() => database(new KnexClientRepository(get<Knex>(Tokens.Knex))));
  c.bind(Tokens.OrderRepository).toDynamicValue(() => database(new KnexOrderRepository(get<Knex>(Tokens.Knex))));
  c.bind(Tokens.FileCategoryRepository).toDynamicValue(() => database(new KnexFileCategoryRepository(get<Knex>(Tokens.Knex))));
  c.bind(Tokens.OrderFileRepository).toDynamicValue(() => database(new KnexOrderFileRepository(get<Knex>(Tokens.Knex))));
  // The read-only paths (lists, lookups, the event feed, PDF and e-invoice data) read from a replica when
  // DATABASE_READ_URL names any; writes, the upload's checks and authentication stay on DATABASE_URL.
  c.bind(Tokens.ReadReplicas).toDynamicValue(() => createReadReplicas(config, get<Knex>(Tokens.Knex), logger));
  const replicas = () => get<ReadReplicas | null>(Tokens.ReadReplicas);
  c.bind(Tokens.InvoiceRepository).toDynamicValue(() => {
    const read = replicas();
    return database(read ? new ReplicaInvoiceRepository(read) : new KnexInvoiceRepository(get<Knex>(Tokens.Knex)));
  });
  c.bind(Tokens.ReadOrderRepository).toDynamicValue(() => {
    const read = replicas();
    return read ? database(new ReplicaOrderRepository(read)) : get<OrderRepositoryPort>(Tokens.OrderRepository);
  });
  c.bind(Tokens.ReadClientRepository).toDynamicValue(() => {
    const read = replicas();
    return read ? database(new ReplicaClientRepository(read)) : get<ClientRepositoryPort>(Tokens.ClientRepository);
  });
  c.bind(Tokens.ApiKeyHasher).toDynamicValue(() => new Sha256ApiKeyHasher());
  c.bind(Tokens.ContentHasher).toDynamicValue(() => new Sha256ContentHasher());
  // Not wrapped: storage raises its own StorageError, whose message the domain shows per file.
  c.bind(Tokens.FileStorage).toDynamicValue(() => createFileStorage(config));
  c.bind(Tokens.PdfRenderer).toDynamicValue(() => {
    const renderer = createPdfRenderer(config);
    return telemetry ? telemetry.traceRenderer(renderer) : renderer;
  });
  c.bind(Tokens.EInvoiceWriter).toDynamicValue(() => new EInvoiceEuWriter());
  c.bind(Tokens.JobHandlers).toDynamicValue(() =>
    buildJobHandlers({
      invoices: get<InvoiceRepositoryPort>(Tokens.InvoiceRepository),
      clients: get<ClientRepositoryPort>(Tokens.ReadClientRepository),
      files: get<OrderFileRepositoryPort>(Tokens.OrderFileRepository),
      renderer: get<PdfRendererPort>(Tokens.PdfRenderer),
      storage: get<FileStoragePort>(Tokens.FileStorage),
      hasher: get<ContentHasherPort>(Tokens.ContentHasher),
      templateVersion: invoiceTemplateVersion(),
      timeZone: config.timeZone,
      eInvoiceWriter: get<EInvoiceWriterPort>(Tokens.EInvoiceWriter),
      // Resolved by the in-process queue only (the embedded profile): its jobs' stages, as a worker reports them.
      onPdfStage: pdfJobStageMetrics(get<ApiMetrics>(Tokens.Metrics).registry),
      onStoreStage: storeJobStageMetrics(get<ApiMetrics>(Tokens.Metrics).registry),
    }),
  );
  c.bind(Tokens.JobQueue).toDynamicValue(() =>
    config.redis
      ? new BullmqJobQueue({
          redis: config.redis,
          prefix: config.redisPrefix,
          onError: (error) => logger.warn({ err: error }, 'job queue connection error'),
          telemetry: telemetry?.bullmq,
        })
      : new InlineJobQueue(() => get<JobHandlers>(Tokens.JobHandlers), {
          concurrency: config.workerConcurrency,
          onRefused: ({ jobId, queue, issues }) => logger.warn({ jobId, queue, issues }, 'job payload refused'),
          onCacheWriteFailed: ({ jobId, cacheError }) => logger.warn({ jobId, cacheError }, 'job completed; its PDF was not kept in the cache'),
        }),
  );
  c.bind(Tokens.RateLimiter).toDynamicValue(() => {
    const redis = get<Redis | null>(Tokens.Redis);
    return new RateLimiter({
      max: config.rateLimit.max,
      windowSeconds: config.rateLimit.windowSeconds,
      redis: redis ? { client: redis, whenReady: (graceMs) => whenRedisReady(redis, graceMs) } : null,
      namespace: `${config.redisPrefix}:ratelimit`,
      logger,
    });
  });
  // Shared by every API process: in Redis when there is one, else in the database.
  c.bind(Tokens.IdempotencyStore).toDynamicValue(() => {
    const redis = get<Redis | null>(Tokens.Redis);
    return redis ? new RedisIdempotencyStore(redis, config.redisPrefix) : database(new KnexIdempotencyStore(get<Knex>(Tokens.Knex)));
  });
  c.bind(Tokens.UploadReceiver).toDynamicValue(
    () =>
      new MultipartUploadReceiver({
        tmpDir: path.join(config.dataDir, 'tmp'),
        maxFiles: config.uploadMaxFiles,
        sniffer: new FileTypeSniffer(),
        storage: get<FileStoragePort>(Tokens.FileStorage),
      }),
  );

  // On the primary, uncached: a key made or revoked with the CLI works or stops at the next request (ADR 0020, 0042).
  c.bind(Tokens.AuthenticateClient).toDynamicValue(
    () =>
      new AuthenticateClientUseCase({
        keys: database(new KnexApiKeyRepository(get<Knex>(Tokens.Knex))),
        hasher: get<ApiKeyHasherPort>(Tokens.ApiKeyHasher),
        clock: get<ClockPort>(Tokens.Clock),
        onUseNotRecorded: (error) => logger.warn({ err: error }, "an API key's last use could not be recorded; the request went on"),
      }),
  );
  c.bind(Tokens.ListFileCategories).toDynamicValue(
    () => new ListFileCategoriesUseCase({ categories: get<FileCategoryRepositoryPort>(Tokens.FileCategoryRepository) }),
  );
  c.bind(Tokens.FindOrderByNr).toDynamicValue(() => new FindOrderByNrUseCase({ orders: get<OrderRepositoryPort>(Tokens.ReadOrderRepository) }));
  // On the primary: every process reserves on the same rows.
  c.bind(Tokens.UploadQuota).toDynamicValue(() => database(new KnexUploadQuotaRepository(get<Knex>(Tokens.Knex))));
  c.bind(Tokens.AttachFiles).toDynamicValue(
    () =>
      new AttachFilesUseCase({
        orders: get<OrderRepositoryPort>(Tokens.OrderRepository),
        categories: get<FileCategoryRepositoryPort>(Tokens.FileCategoryRepository),
        files: get<OrderFileRepositoryPort>(Tokens.OrderFileRepository),
        storage: get<FileStoragePort>(Tokens.FileStorage),
        queue: get<JobQueuePort>(Tokens.JobQueue),
        idempotency: get<IdempotencyStorePort>(Tokens.IdempotencyStore),
        maxFiles: config.uploadMaxFiles,
        jobTimeoutMs: config.jobTimeoutMs,
        newId: randomUUID,
        quota: {
          usage: get<UploadQuotaPort>(Tokens.UploadQuota),
          bytesPerDay: config.uploadQuotaBytesPerDay,
          timeZone: config.timeZone,
          clock: get<ClockPort>(Tokens.Clock),
        },
      }),
  );
  c.bind(Tokens.ListInvoices).toDynamicValue(
    () =>
      new ListInvoicesUseCase({
        invoices: get<InvoiceRepositoryPort>(Tokens.InvoiceRepository),
        clock: get<ClockPort>(Tokens.Clock),
        timeZone: config.timeZone,
      }),
  );
  c.bind(Tokens.DownloadInvoicePdf).toDynamicValue(
    () =>
      new DownloadInvoicePdfUseCase({
        invoices: get<InvoiceRepositoryPort>(Tokens.InvoiceRepository),
        clients: get<ClientRepositoryPort>(Tokens.ReadClientRepository),
        storage: get<FileStoragePort>(Tokens.FileStorage),
        queue: get<JobQueuePort>(Tokens.JobQueue),
        hasher: get<ContentHasherPort>(Tokens.ContentHasher),
        templateVersion: invoiceTemplateVersion(),
        eInvoiceWriterVersion: get<EInvoiceWriterPort>(Tokens.EInvoiceWriter).version,
        timeZone: config.timeZone,
        cache: config.pdfCache.maxObjects > 0,
        jobTimeoutMs: config.jobTimeoutMs,
        newId: randomUUID,
        onCacheEvent: pdfCacheEvents(logger, () => get<ApiMetrics>(Tokens.Metrics)),
        recent: new RecentPdfs({ versions: RECENT_DOWNLOADS, pdfBytes: config.pdfCache.memoryBytes }),
      }),
  );
  c.bind(Tokens.DownloadEInvoice).toDynamicValue(
    () =>
      new DownloadEInvoiceUseCase({
        invoices: get<InvoiceRepositoryPort>(Tokens.InvoiceRepository),
        clients: get<ClientRepositoryPort>(Tokens.ReadClientRepository),
        writer: get<EInvoiceWriterPort>(Tokens.EInvoiceWriter),
        hasher: get<ContentHasherPort>(Tokens.ContentHasher),
        timeZone: config.timeZone,
      }),
  );
  c.bind(Tokens.EventFeed).toDynamicValue(() => {
    const options = { onWatchError: (error: unknown) => logger.warn({ err: error }, 'looking for new events failed; waits go on') };
    const read = replicas();
    return database(read ? new ReplicaEventFeed(read, options) : new KnexEventFeed(get<Knex>(Tokens.Knex), options));
  });
  c.bind(Tokens.EventCapture).toDynamicValue(() =>
    database(
      new KnexEventCapture(get<Knex>(Tokens.Knex), {
        onUnreadable: (invoiceId, reason) => logger.warn({ invoiceId, reason }, 'an invoice row the list cannot show was changed; no event for this change'),
        onPublished: eventCaptureLagMetrics(get<ApiMetrics>(Tokens.Metrics).registry),
      }),
    ),
  );
  c.bind(Tokens.ListEvents).toDynamicValue(
    () => new ListEventsUseCase({ feed: get<EventFeedPort>(Tokens.EventFeed), clock: get<ClockPort>(Tokens.Clock), maxWaiting: config.eventsMaxWaiting }),
  );
  c.bind(Tokens.PublishEvents).toDynamicValue(() => new PublishEventsUseCase({ capture: get<EventCapturePort>(Tokens.EventCapture) }));
  c.bind(Tokens.SecretCipher).toDynamicValue(() => createSecretCipher(config));
  c.bind(Tokens.ManageWebhooks).toDynamicValue(
    () =>
      new ManageWebhookEndpointsUseCase({
        endpoints: database(new KnexWebhookEndpointRepository(get<Knex>(Tokens.Knex))),
        // A replay's retention check (410) reads what retention removed on the primary, like the deliveries it schedules.
        feed: replicas() ? database(new KnexEventFeed(get<Knex>(Tokens.Knex))) : get<EventFeedPort>(Tokens.EventFeed),
        resolver: new DnsHostResolver(),
        signer: new StandardWebhooksSigner(),
        cipher: get<SecretCipherPort>(Tokens.SecretCipher),
        clock: get<ClockPort>(Tokens.Clock),
        maxEndpoints: config.webhooks.maxEndpoints,
        allowPrivateTargets: config.webhooks.allowPrivateTargets,
        targetPolicy: database(new KnexWebhookTargetPolicy(get<Knex>(Tokens.Knex))),
      }),
  );
  c.bind(Tokens.OrderFiles).toDynamicValue(
    () =>
      new OrderFilesUseCase({
        orders: get<OrderRepositoryPort>(Tokens.ReadOrderRepository),
        // The primary: a file just uploaded is listed and downloadable at once.
        files: get<OrderFileRepositoryPort>(Tokens.OrderFileRepository),
        storage: get<FileStoragePort>(Tokens.FileStorage),
        // The key is read (or made in DATA_DIR) on the first local link only: with S3, links are presigned and it is never needed.
        signer: new HmacFileLinkSigner(() => loadFileLinkKey(config.fileLinkSecret, config.dataDir)),
        // On the primary, uncached, as authentication: a revoked key's links stop at the next request on every process.
        keys: database(new KnexApiKeyRepository(get<Knex>(Tokens.Knex))),
        clock: get<ClockPort>(Tokens.Clock),
        disposition: fileContentDisposition,
      }),
  );
  c.bind(Tokens.WebhookDeliveryQueue).toDynamicValue(() => database(new KnexWebhookDeliveryQueue(get<Knex>(Tokens.Knex))));
  c.bind(Tokens.DeliverWebhook).toDynamicValue(
    () =>
      new DeliverWebhookUseCase({
        sender: new NodeWebhookSender({ maxSocketsPerOrigin: config.webhooks.concurrency }),
        signer: new StandardWebhooksSigner(),
        cipher: get<SecretCipherPort>(Tokens.SecretCipher),
        settings: config.webhooks,
        nowSeconds: () => Math.floor(Date.now() / 1000),
      }),
  );
  // Exports: rows on the primary (they are also the runners' queue); the cursor is the primary's feed end.
  c.bind(Tokens.ExportRepository).toDynamicValue(() => database(new KnexExportRepository(get<Knex>(Tokens.Knex))));
  c.bind(Tokens.ManageExports).toDynamicValue(
    () =>
      new ManageExportsUseCase({
        exports: get<ExportRepositoryPort>(Tokens.ExportRepository),
        invoices: get<InvoiceRepositoryPort>(Tokens.InvoiceRepository),
        feed: replicas() ? database(new KnexEventFeed(get<Knex>(Tokens.Knex))) : get<EventFeedPort>(Tokens.EventFeed),
        storage: get<FileStoragePort>(Tokens.FileStorage),
        clock: get<ClockPort>(Tokens.Clock),
        settings: {
          maxInvoices: config.exports.maxInvoices,
          maxActive: config.exports.maxActive,
          maxKeptBytes: config.exports.storageBytesPerDirectory,
          timeZone: config.timeZone,
        },
      }),
  );
  c.bind(Tokens.RunExport).toDynamicValue(() =>
    buildRunExport({
      exports: get<ExportRepositoryPort>(Tokens.ExportRepository),
      invoices: get<InvoiceRepositoryPort>(Tokens.InvoiceRepository),
      clients: get<ClientRepositoryPort>(Tokens.ReadClientRepository),
      storage: get<FileStoragePort>(Tokens.FileStorage),
      queue: get<JobQueuePort>(Tokens.JobQueue),
      hasher: get<ContentHasherPort>(Tokens.ContentHasher),
      eInvoiceWriter: get<EInvoiceWriterPort>(Tokens.EInvoiceWriter),
      ...runExportSettings(config, logger),
      observer: exportRunMetrics(get<ApiMetrics>(Tokens.Metrics).registry),
    }),
  );
  c.bind(Tokens.ProcessTasks).toDynamicValue((): ApiProcessTasks => ({
    checkSecretKeys: async () => {
      const cipher = get<AesGcmSecretCipher>(Tokens.SecretCipher);
      const result = await checkStoredSecrets(new KnexWebhookSecretStore(get<Knex>(Tokens.Knex)), cipher, config);
      if (result.sealedPlain > 0)
        logger.info({ sealed: result.sealedPlain, keyId: cipher.keyIds[0] }, 'sealed the webhook secrets a release before encryption stored in clear');
    },
    startMetricsListener: () => startMetricsServer(get<ApiMetrics>(Tokens.Metrics), config.metrics, logger),
    startEventPublishing: (onPublished) =>
      startEventPublishing({ publish: get<PublishEventsUseCase>(Tokens.PublishEvents), intervalMs: config.events.publishIntervalMs, logger, onPublished }),
    startWebhookDelivering: () =>
      config.redis
        ? null
        : startWebhookDelivering({
            deliver: get<DeliverWebhookUseCase>(Tokens.DeliverWebhook),
            queue: get<WebhookDeliveryQueuePort>(Tokens.WebhookDeliveryQueue),
            concurrency: config.webhooks.concurrency,
            perEndpoint: config.webhooks.concurrencyPerEndpoint,
            perDirectory: config.webhooks.maxInFlightPerDirectory,
            attemptTimeoutMs: config.webhooks.timeoutMs,
            intervalMs: config.events.publishIntervalMs,
            logger,
            observer: webhookDeliveryMetrics(get<ApiMetrics>(Tokens.Metrics).registry),
          }),
    startExportRunning: () => (config.redis ? null : startExportRunning({ run: get<RunExportUseCase>(Tokens.RunExport), intervalMs: EXPORT_POLL_MS, logger })),
    startPeriodic: (name, task, intervalMs) => startPeriodic(name, task, intervalMs, logger),
    sweepTempFiles,
    indexPendingDocuments: (limit) => indexPendingDocuments(get<Knex>(Tokens.Knex), limit),
  }));
  bindOps(c, config, logger);
  return c;
}
