import type { Container } from 'inversify';
import type { Logger } from 'pino';
import type { AppConfig } from '@logi/config';
import {
  RemoveOrphanObjectsUseCase,
  removeExpiredExports,
  type ExportRepositoryPort,
  SweepLeftoversUseCase,
  SweepPdfCacheUseCase,
  type EventFeedPort,
  type WebhookDeliveryQueuePort,
  type FileStoragePort,
  type IdempotencyStorePort,
  type OrderFileRepositoryPort,
  type UploadQuotaPort,
} from '@logi/domain';
import type { ApiProcessTasks, Stoppable } from '../process-tasks.js';
import { Tokens } from '../tokens.js';
import type { ApiMetrics } from '../ops/metrics/api-metrics.js';
import type { MultipartUploadReceiver } from '../uploads/multipart-upload.receiver.js';

const EVERY_MS = 10 * 60_000;
/** Rows written behind the service's back are indexed this often, a batch at a time, for at most a few seconds a run. */
const INDEX_PENDING_EVERY_MS = 30_000;
const INDEX_PENDING_BATCH = 2_000;
const INDEX_PENDING_BUDGET_MS = 5_000;
const HOUR_MS = 60 * 60_000;
/** Upload quota usage is kept this long: past any time zone's today, and a day to see yesterday's in. */
const QUOTA_USAGE_KEPT_MS = 3 * 24 * HOUR_MS;
/** Events past EVENTS_RETENTION_DAYS removed per run: batches of this many, for at most a few seconds. */
const EXPIRED_EVENTS_BATCH = 5_000;
const EXPIRED_EVENTS_BUDGET_MS = 5_000;
/** Expired exports handled per run. */
const EXPIRED_EXPORTS_BATCH = 500;
/** Objects under orders/ looked at per run: pages of this many (one S3 listing each), this many pages. */
const ORPHAN_PAGE_SIZE = 1_000;
const ORPHAN_PAGES_PER_RUN = 5;

/**
 * The API's safety net for what a killed process leaves behind, and the bounded upkeep of what grows (orphaned objects,
 * expired keys, the PDF cache, old events), each a bounded amount of work a run (docs/operate/runbook.md#housekeeping-and-storage-reconciliation).
 */
export function startHousekeeping(container: Container): Stoppable {
  const config = container.get<AppConfig>(Tokens.Config);
  const logger = container.get<Logger>(Tokens.Logger);
  const receiver = container.get<MultipartUploadReceiver>(Tokens.UploadReceiver);
  const maxAgeMs = Math.max(HOUR_MS, 2 * config.jobTimeoutMs);
  const storage = container.get<FileStoragePort>(Tokens.FileStorage);
  const sweep = new SweepLeftoversUseCase({ storage, maxAgeMs });
  const metrics = container.get<ApiMetrics>(Tokens.Metrics);
  let orphansRemoved = 0;
  // Past maxAgeMs no job can still write an object's row, so none in flight is touched (docs/contribute/decisions/0027-orphan-object-reconciliation.md).
  const orphans = new RemoveOrphanObjectsUseCase({
    storage,
    files: container.get<OrderFileRepositoryPort>(Tokens.OrderFileRepository),
    maxAgeMs,
    pageSize: ORPHAN_PAGE_SIZE,
    maxPages: ORPHAN_PAGES_PER_RUN,
    onRemoved: () => {
      orphansRemoved += 1;
      metrics.orphanObjectsRemoved.inc();
    },
  });
  const pdfCache = new SweepPdfCacheUseCase({
    storage,
    maxAgeMs: config.pdfCache.maxAgeHours * HOUR_MS,
    maxObjects: config.pdfCache.maxObjects,
    onRemoved: (_key, reason) => metrics.pdfCacheRemoved.inc({ reason }),
  });
  const tasks = container.get<ApiProcessTasks>(Tokens.ProcessTasks);
  const idempotency = container.get<IdempotencyStorePort>(Tokens.IdempotencyStore);
  const quota = container.get<UploadQuotaPort>(Tokens.UploadQuota);
  const indexing = tasks.startPeriodic(
    'index pending documents',
    async () => {
      const started = Date.now();
      let indexed = 0;
      for (;;) {
        const batch = await tasks.indexPendingDocuments(INDEX_PENDING_BATCH);
        indexed += batch;
        if (batch < INDEX_PENDING_BATCH || Date.now() - started > INDEX_PENDING_BUDGET_MS) break;
      }
      if (indexed > 0) logger.info({ indexed }, 'indexed documents written behind the service');
      return { indexed };
    },
    INDEX_PENDING_EVERY_MS,
  );
  const sweeping = tasks.startPeriodic(
    'sweep leftovers',
    async () => {
      const swept = await sweep.execute();
      const tempFiles = await tasks.sweepTempFiles(receiver.tmpDir, new Date(Date.now() - maxAgeMs));
      // Idempotency-Key records past their 24 h (table store; Redis keys expire by themselves).
      const idempotencyKeys = await idempotency.deleteExpired();
      // Days compare as text (YYYY-MM-DD); three UTC days back is before every zone's today.
      const quotaDays = await quota.removeBefore(new Date(Date.now() - QUOTA_USAGE_KEPT_MS).toISOString().slice(0, 10));
      orphansRemoved = 0;
      try {
        return { ...swept, tempFiles, idempotencyKeys, quotaDays, orphans: await orphans.execute() };
      } finally {
        // Logged even when the run stops half-way (storage or database gone): what was removed is gone.
        if (orphansRemoved > 0) logger.info({ orphanObjectsRemoved: orphansRemoved }, 'removed objects under orders/ that no order file row points at');
      }
    },
    EVERY_MS,
  );
  // With the cache off (a bound of 0), what an earlier run kept is removed too.
  const cacheSweeping = tasks.startPeriodic(
    'sweep pdf cache',
    async () => {
      const swept = await pdfCache.execute();
      if (swept.expired + swept.overCount > 0) logger.info({ pdfCache: swept }, 'removed cached PDFs past the age or count bound');
      return swept;
    },
    EVERY_MS,
  );
  const exportRetention = tasks.startPeriodic(
    'remove expired exports',
    async () => {
      const exports = container.get<ExportRepositoryPort>(Tokens.ExportRepository);
      const removed = await removeExpiredExports({ exports, storage }, Math.floor(Date.now() / 1000), EXPIRED_EXPORTS_BATCH);
      if (removed.archives + removed.exports > 0) logger.info({ expiredExports: removed }, 'removed expired export archives and exports');
      return removed;
    },
    EVERY_MS,
  );
  const events = container.get<EventFeedPort>(Tokens.EventFeed);
  const attempts = container.get<WebhookDeliveryQueuePort>(Tokens.WebhookDeliveryQueue);
  const eventRetention = tasks.startPeriodic(
    'remove expired events',
    async () => {
      const createdBefore = Math.floor(Date.now() / 1000) - config.events.retentionDays * 86_400;
      const started = Date.now();
      let removed = 0;
      for (;;) {
        const batch = await events.removeExpired(createdBefore, EXPIRED_EVENTS_BATCH);
        removed += batch;
        if (batch < EXPIRED_EVENTS_BATCH || Date.now() - started > EXPIRED_EVENTS_BUDGET_MS) break;
      }
      // Finished webhook attempts are kept as long as events.
      let removedAttempts = 0;
      for (;;) {
        const batch = await attempts.removeFinished(createdBefore, EXPIRED_EVENTS_BATCH);
        removedAttempts += batch;
        if (batch < EXPIRED_EVENTS_BATCH || Date.now() - started > 2 * EXPIRED_EVENTS_BUDGET_MS) break;
      }
      if (removed + removedAttempts > 0)
        logger.info({ removed, removedAttempts, retentionDays: config.events.retentionDays }, 'removed events and webhook attempts past their retention');
      return { removed, removedAttempts };
    },
    EVERY_MS,
  );
  return {
    async stop() {
      await Promise.all([indexing.stop(), sweeping.stop(), cacheSweeping.stop(), eventRetention.stop(), exportRetention.stop()]);
    },
  };
}
