import type { Container } from 'inversify';
import type { Logger } from 'pino';
import type { Knex } from 'knex';
import { indexPendingDocuments, startPeriodic, sweepTempFiles, type AppConfig, type PeriodicTask } from '@logi/adapters';
import { SweepLeftoversUseCase, type FileStoragePort } from '@logi/domain';
import { Tokens } from '../tokens.js';
import type { MultipartUploadReceiver } from '../uploads/multipart-upload.receiver.js';

const EVERY_MS = 10 * 60_000;
/** Rows written behind the service's back are indexed this often, a batch at a time, for at most a few seconds a run. */
const INDEX_PENDING_EVERY_MS = 30_000;
const INDEX_PENDING_BATCH = 2_000;
const INDEX_PENDING_BUDGET_MS = 5_000;
const HOUR_MS = 60 * 60_000;

/**
 * The API's safety net for what a killed process leaves behind: staged
 * uploads and rendered PDFs in storage, and upload temp files on disk. Runs
 * at start and every ten minutes; objects younger than an hour (and than
 * twice the job timeout) are never touched, so no request can lose one.
 * Beside it, every 30 s, invoices and orders written straight into the
 * database (listed by triggers) are indexed for search.
 */
export function startHousekeeping(container: Container): PeriodicTask {
  const config = container.get<AppConfig>(Tokens.Config);
  const logger = container.get<Logger>(Tokens.Logger);
  const receiver = container.get<MultipartUploadReceiver>(Tokens.UploadReceiver);
  const maxAgeMs = Math.max(HOUR_MS, 2 * config.jobTimeoutMs);
  const sweep = new SweepLeftoversUseCase({ storage: container.get<FileStoragePort>(Tokens.FileStorage), maxAgeMs });
  const knex = container.get<Knex>(Tokens.Knex);
  const indexing = startPeriodic(
    'index pending documents',
    async () => {
      const started = Date.now();
      let indexed = 0;
      for (;;) {
        const batch = await indexPendingDocuments(knex, INDEX_PENDING_BATCH);
        indexed += batch;
        if (batch < INDEX_PENDING_BATCH || Date.now() - started > INDEX_PENDING_BUDGET_MS) break;
      }
      if (indexed > 0) logger.info({ indexed }, 'indexed documents written behind the service');
      return { indexed };
    },
    INDEX_PENDING_EVERY_MS,
    logger,
  );
  const sweeping = startPeriodic(
    'sweep leftovers',
    async () => ({
      ...(await sweep.execute()),
      tempFiles: await sweepTempFiles(receiver.tmpDir, new Date(Date.now() - maxAgeMs)),
    }),
    EVERY_MS,
    logger,
  );
  return {
    async stop() {
      await Promise.all([indexing.stop(), sweeping.stop()]);
    },
  };
}
