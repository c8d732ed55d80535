import type { ClaimedExport, Export, ExportDocument } from '../exports/export.js';
import type { DocumentLanguage } from '../invoices/invoice-document/invoice-document.js';

export interface NewExport {
  directory: string;
  created: number;
  filters: Record<string, string>;
  documents: ExportDocument[];
  lang: DocumentLanguage;
  duplicate: boolean;
  csv: boolean;
  eventsCursor: number;
}

/** What is left to remove of an export: its row is gone, its archive (if any attempt stored one) is named here. */
export interface RemovedExport {
  id: number;
  /** Every attempt claimed so far: each may have stored `exportArchiveKey(id, n)`. */
  attempts: number;
}

/** What a directory may hold when it asks for one more export (contract, "Exports" and "Export storage"). */
export interface ExportLimits {
  /** EXPORT_MAX_ACTIVE: queued or running exports. */
  maxActive: number;
  /** EXPORT_STORAGE_MB_PER_DIRECTORY in bytes: the archives kept (succeeded, not yet expired). */
  maxKeptBytes: number;
  /** Unix seconds: archives expiring at or before it are no longer kept. */
  now: number;
}

/** The answer to a request for one more export: the export, or why not. */
export type CreateExportResult =
  | { created: Export }
  | { refused: 'active' }
  /** `oldestExpires`: when the oldest kept archive expires (Unix seconds). */
  | { refused: 'storage'; oldestExpires: number };

/**
 * Exports and the work queue they form: a row is claimed by a runner for one attempt, with a lease it renews while
 * it works; a runner whose attempt is no longer the row's (the export was cancelled, or its lease ran out and another
 * runner took it) must stop and write nothing more. Finishing an attempt also notes the change for the event feed
 * in the same transaction (`export.succeeded` / `export.failed`).
 */
export interface ExportRepositoryPort {
  /**
   * Stores a queued export unless the directory already has `maxActive` queued or running, or keeps archives of
   * `maxKeptBytes` or more: then nothing is stored. Counted under the directory's lock, so two requests at once never
   * both pass a limit.
   */
  create(draft: NewExport, limits: ExportLimits): Promise<CreateExportResult>;
  /** The directory's exports, newest first. */
  list(directory: string, limit: number): Promise<Export[]>;
  find(directory: string, id: number): Promise<Export | null>;
  /** Every directory's exports, newest first (operators). */
  listAll(limit: number): Promise<Array<Export & { attempt: number }>>;
  /** Where the succeeded export's archive is stored; null when it has none (not succeeded). */
  archiveKey(directory: string, id: number): Promise<string | null>;
  /** Removes the row (a running attempt sees it on its next renewal); null when there was none. */
  remove(directory: string, id: number): Promise<RemovedExport | null>;
  /**
   * Claims a queued export, or a running one whose lease ended before `nowMs` (its runner died), for a new attempt
   * leased until `leaseUntilMs`; null when none is waiting. Directories take turns: the waiting export of the directory
   * whose last claim is the oldest goes first (each directory's in its own order), so one directory's backlog never
   * holds every runner.
   */
  claimNext(nowMs: number, leaseUntilMs: number): Promise<ClaimedExport | null>;
  /** Marks the attempt running with what it holds; false when the attempt was lost. */
  start(id: number, attempt: number, values: { total: number; started: number; leaseUntilMs: number }): Promise<boolean>;
  /** Records progress and renews the lease; false when the attempt was lost (stop, write nothing more). */
  progress(id: number, attempt: number, done: number, leaseUntilMs: number): Promise<boolean>;
  /**
   * Marks the attempt succeeded with its archive, unless the directory's kept archives with this one would pass
   * `maxKeptBytes` (counted under the directory's lock): then 'over-budget' and nothing changed. 'lost' when the attempt
   * was lost. Unless 'succeeded', the archive is the caller's to remove.
   */
  succeed(
    id: number,
    attempt: number,
    values: { archiveKey: string; size: number; sha256: string; done: number; finished: number; expires: number; maxKeptBytes: number },
  ): Promise<'succeeded' | 'lost' | 'over-budget'>;
  /** Whether the attempt is the export's and it is running (its staged archive is live). */
  isRunning(id: number, attempt: number): Promise<boolean>;
  /** Marks the attempt failed with a readable reason; false when the attempt was lost. */
  fail(id: number, attempt: number, values: { error: string; finished: number; expires: number }): Promise<boolean>;
  /** Up to `limit` exports whose `expires` is not after `now` (Unix seconds) and whose archive is still named, with their attempts. */
  listExpired(now: number, limit: number): Promise<RemovedExport[]>;
  /** Forgets an expired export's archive once its objects are removed (the export stays, answering 410 on download). */
  forgetArchive(id: number): Promise<void>;
  /** Removes up to `limit` rows of exports that expired before `before` (Unix seconds); how many. */
  removeExpired(before: number, limit: number): Promise<number>;
}
