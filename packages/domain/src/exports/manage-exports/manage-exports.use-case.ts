import type { ClockPort } from '../../ports/clock.port.js';
import type { EventFeedPort } from '../../ports/event-feed.port.js';
import type { ExportRepositoryPort } from '../../ports/export-repository.port.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import { exportArchiveKey, type Export } from '../export.js';
import {
  ExportExpiredError,
  ExportNotFoundError,
  ExportNotReadyError,
  ExportStorageQuotaError,
  ExportTooLargeError,
  TooManyExportsError,
} from '../exports.errors.js';
import { exportCriteria, parseExportRequest } from './export-request.input.js';

/** The newest exports `GET /v1/exports` shows. */
export const EXPORTS_LISTED = 100;

/** When a client refused for too many exports may try again: about how long a small export takes. */
const TOO_MANY_RETRY_AFTER_SECONDS = 30;

export interface ExportSettings {
  /** EXPORT_MAX_INVOICES: more matching invoices is 422 on `filters`. */
  maxInvoices: number;
  /** EXPORT_MAX_ACTIVE: queued or running exports per directory. */
  maxActive: number;
  /** EXPORT_STORAGE_MB_PER_DIRECTORY in bytes: the archives a directory keeps (docs/contribute/decisions/0049-export-bounds.md). */
  maxKeptBytes: number;
  timeZone: string;
}

/**
 * The client's side of exports: ask for one (the feed's end at that moment becomes its `events_cursor`), follow it,
 * download its archive, cancel it. Every call is scoped to the directory; another directory's export is missing.
 */
export class ManageExportsUseCase {
  constructor(
    private readonly deps: {
      exports: ExportRepositoryPort;
      invoices: InvoiceRepositoryPort;
      /** Read on the primary: the cursor must never be past the feed's end, and a replica's end may be behind (safe) but never ahead. */
      feed: EventFeedPort;
      storage: FileStoragePort;
      clock: ClockPort;
      settings: ExportSettings;
    },
  ) {}

  async create(directory: string, body: unknown): Promise<Export> {
    const now = this.deps.clock.now();
    const context = { directory, now, timeZone: this.deps.settings.timeZone };
    const request = parseExportRequest(body, context);
    const { total } = await this.deps.invoices.list({ ...exportCriteria(request.filters, context), page: 1, perPage: 1 });
    if (total > this.deps.settings.maxInvoices) {
      throw new ExportTooLargeError(this.deps.settings.maxInvoices, total);
    }
    // Read before the export exists: every change committed after the answer gets an event past it.
    const eventsCursor = await this.deps.feed.latestId(directory);
    const seconds = Math.floor(now.getTime() / 1000);
    const result = await this.deps.exports.create(
      { directory, created: seconds, ...request, eventsCursor },
      { maxActive: this.deps.settings.maxActive, maxKeptBytes: this.deps.settings.maxKeptBytes, now: seconds },
    );
    if ('created' in result) return result.created;
    if (result.refused === 'active') throw new TooManyExportsError(TOO_MANY_RETRY_AFTER_SECONDS);
    throw new ExportStorageQuotaError(Math.max(1, result.oldestExpires - seconds));
  }

  list(directory: string): Promise<Export[]> {
    return this.deps.exports.list(directory, EXPORTS_LISTED);
  }

  async get(directory: string, id: number): Promise<Export> {
    return (await this.deps.exports.find(directory, id)) ?? notFound();
  }

  /** Where the archive of a succeeded, unexpired export is, with the export (its size and sha256). */
  async archive(directory: string, id: number): Promise<{ export: Export; key: string }> {
    const found = await this.get(directory, id);
    if (found.status !== 'succeeded') throw new ExportNotReadyError();
    if (found.expires !== null && found.expires <= Math.floor(this.deps.clock.now().getTime() / 1000)) throw new ExportExpiredError();
    const key = await this.deps.exports.archiveKey(directory, id);
    if (key === null) throw new ExportNotReadyError();
    return { export: found, key };
  }

  /** Cancels a queued or running export (its runner stops on its next renewal) and removes it and its archive. */
  async cancel(directory: string, id: number): Promise<void> {
    const removed = await this.deps.exports.remove(directory, id);
    if (!removed) notFound();
    await removeArchives(this.deps.storage, removed);
  }
}

/** How long an expired export is still listed (its download answering 410) before it goes. */
export const EXPIRED_EXPORTS_KEPT_SECONDS = 7 * 86_400;

/**
 * Housekeeping: removes the archives of exports past `expires` (the export stays a week, its download answering
 * 410), then the rows of exports expired longer than that. Bounded work a run.
 */
export async function removeExpiredExports(
  deps: { exports: ExportRepositoryPort; storage: FileStoragePort },
  nowSeconds: number,
  limit: number,
): Promise<{ archives: number; exports: number }> {
  const expired = await deps.exports.listExpired(nowSeconds, limit);
  for (const item of expired) {
    // Storage trouble stops the run before the archive is forgotten: the next run tries again.
    for (let attempt = 1; attempt <= item.attempts; attempt += 1) await deps.storage.delete(exportArchiveKey(item.id, attempt));
    await deps.exports.forgetArchive(item.id);
  }
  return { archives: expired.length, exports: await deps.exports.removeExpired(nowSeconds - EXPIRED_EXPORTS_KEPT_SECONDS, limit) };
}

/** Removes every attempt's archive of an export whose row is gone (best effort: a failed delete is left in storage). */
export async function removeArchives(storage: FileStoragePort, removed: { id: number; attempts: number }): Promise<void> {
  for (let attempt = 1; attempt <= removed.attempts; attempt += 1) {
    await storage.delete(exportArchiveKey(removed.id, attempt)).catch(() => undefined);
  }
}

function notFound(): never {
  throw new ExportNotFoundError();
}
