import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Logger } from 'pino';
import { EXPORT_FAILURES, type buildRunExport, type FileStoragePort } from '@logi/domain';
import { ChromiumPdfRenderer } from '../chromium/chromium-pdf.renderer.js';
import { LocalFileStorage } from '../fs/local-file.storage.js';
import { MinioFileStorage } from '../minio/minio-file.storage.js';
import { invoiceTemplateVersion } from '../handlebars/invoice-template.version.js';
import { YazlExportArchive } from '../zip/yazl-export.archive.js';
import { createKnex } from '../knex/create-knex.js';
import type { Knex } from 'knex';
import type { AppConfig } from '@logi/config';

/**
 * The choices every process makes alike from the configuration, in one place:
 * MinIO when S3 is configured, else files under DATA_DIR; the system Chromium
 * with the configured limits and one page per job a process runs at once.
 */
export function createFileStorage(config: AppConfig): FileStoragePort {
  return config.s3 ? new MinioFileStorage(config.s3) : new LocalFileStorage(path.join(config.dataDir, 'files'));
}

/** The primary database of an API or worker process: its statements bounded (DB_QUERY_TIMEOUT_MS), its pool DB_POOL_MAX. */
export function createPrimaryKnex(config: AppConfig, logger: Logger): Knex {
  return createKnex({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    queryTimeoutMs: config.databaseQueryTimeoutMs,
    poolMax: config.databasePoolMax,
    logger,
  });
}

/** `bulkOnly`: every render of this process is an export's (a worker whose WORKER_QUEUES has `pdf-bulk` and not `pdf`). */
export function createPdfRenderer(config: AppConfig, options: { bulkOnly?: boolean } = {}): ChromiumPdfRenderer {
  return new ChromiumPdfRenderer({
    chromiumPath: config.chromiumPath,
    rendersPerBrowser: config.pdf.rendersPerBrowser,
    renderTimeoutMs: config.pdf.renderTimeoutMs,
    // As many pages as PDF jobs run at once (WORKER_CONCURRENCY), so no job waits for a page.
    poolSize: config.workerConcurrency,
    // One page kept for interactive renders while clients render and exports' run, unless none ever comes (ADR 0053, 0059).
    reservedForInteractive: options.bulkOnly ? 0 : 1,
  });
}

type RunExportDeps = Parameters<typeof buildRunExport>[0];

/** What the export runner takes from the configuration, the same in the API process (embedded) and in workers. */
export function runExportSettings(
  config: AppConfig,
  logger: Logger,
): Pick<
  RunExportDeps,
  'archives' | 'templateVersion' | 'timeZone' | 'pdfCache' | 'renderAhead' | 'maxInvoices' | 'retentionHours' | 'newId' | 'leaseMs' | 'maxKeptBytes' | 'report'
> {
  return {
    archives: new YazlExportArchive(path.join(config.dataDir, 'tmp')),
    templateVersion: invoiceTemplateVersion(),
    timeZone: config.timeZone,
    pdfCache: config.pdfCache.maxObjects > 0,
    // Twice the queue's concurrency: the next renders are queued while the current ones print and travel through storage.
    renderAhead: 2 * config.workerConcurrency,
    maxInvoices: config.exports.maxInvoices,
    retentionHours: config.exports.retentionHours,
    newId: randomUUID,
    leaseMs: config.exports.leaseMs,
    maxKeptBytes: config.exports.storageBytesPerDirectory,
    // The client reads only the fixed text; the detail (a storage or SQL message) is logged with the export's id.
    report: ({ exportId, directory, attempt, failure, detail, final }) =>
      logger[final ? 'error' : 'warn'](
        { exportId, directory, attempt, error: EXPORT_FAILURES[failure], err: detail },
        final ? 'an export failed' : 'an export attempt failed; it is tried again',
      ),
  };
}
