import type { DownloadEInvoiceUseCase } from '../../invoices/download-e-invoice/download-e-invoice.use-case.js';
import type { DownloadInvoicePdfUseCase } from '../../invoices/download-invoice-pdf/download-invoice-pdf.use-case.js';
import { InvoiceNotFoundError } from '../../invoices/invoices.errors.js';
import { toInvoiceListItem } from '../../events/invoice-list-item.js';
import type { ArchiveBuilder, ArchiveMember, ExportArchivePort } from '../../ports/export-archive.port.js';
import type { ExportRepositoryPort } from '../../ports/export-repository.port.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import type { Invoice } from '../../invoices/invoice.js';
import { EXPORT_FAILURES, exportArchiveKey, exportMemberPath, type ClaimedExport, type Export, type ExportDocument, type ExportFailure } from '../export.js';
import { exportCriteria } from '../manage-exports/export-request.input.js';
import { exportManifest, invoicesCsv } from './export-archive.content.js';

export interface RunExportSettings {
  timeZone: string;
  /** EXPORT_MAX_INVOICES, checked again on the snapshot (invoices may have been added since the POST). */
  maxInvoices: number;
  /** EXPORT_RETENTION_HOURS: how long a finished export (and its archive) is kept. */
  retentionHours: number;
  /** How long a claim lasts without renewal; a runner that dies is replaced after it. */
  leaseMs: number;
  /** How often `done` is written (and the lease renewed, and a cancel noticed). */
  progressIntervalMs: number;
  /** Invoices whose documents are made ahead of the one being written (renders run in parallel on the queue). */
  renderAhead: number;
  /**
   * Bytes of documents held ahead of the one being written: no further render starts while the documents made but not
   * yet in the ZIP, plus those still rendering (each counted as the largest seen so far), reach it.
   */
  renderAheadBytes: number;
  /** Attempts before an export that keeps failing on something passing (a renderer down) is marked failed. */
  maxAttempts: number;
  /** EXPORT_STORAGE_MB_PER_DIRECTORY in bytes: an archive that would take its directory past it is not kept. */
  maxKeptBytes: number;
}

/** A failed attempt as the log shows it: the client sees only the fixed text of `failure`. */
export interface ExportFailureReport {
  exportId: number;
  directory: string;
  attempt: number;
  failure: ExportFailure;
  /** The detail: an error, or a sentence. */
  detail: unknown;
  /** Whether the export is now failed (else another attempt follows). */
  final: boolean;
}

/** What a runner's metrics see: an attempt that runs, and how each export ends. */
export interface ExportRunObserver {
  /** An attempt started running here (claimed); `ended` follows whatever happens. */
  started(): void;
  ended(): void;
  /** The export succeeded with an archive of `bytes`. */
  succeeded(bytes: number): void;
  /** An attempt failed on `failure`; `final` when the export is now failed. */
  failed(failure: ExportFailure, final: boolean): void;
}

/** An error raised in one step of an attempt, with the kind of failure the client is told. */
class ExportStepError extends Error {
  constructor(
    readonly failure: ExportFailure,
    readonly detail: unknown,
  ) {
    super(detail instanceof Error ? detail.message : String(detail));
  }
}

/** Runs `work`, naming what failed when it throws. */
async function step<T>(failure: ExportFailure, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof ExportStepError ? error : new ExportStepError(failure, error);
  }
}

/**
 * A runner's turn: claim the oldest waiting export (or one whose runner died), read the matching invoices in one
 * query (one moment), write the ZIP member by member into a temporary file (constant memory), store it under a key
 * of this attempt, and only then mark the export succeeded. A cancelled export is noticed on the next renewal and
 * leaves nothing; a failed store leaves nothing and says why (docs/contribute/decisions/0041-exports.md).
 */
export class RunExportUseCase {
  constructor(
    private readonly deps: {
      exports: ExportRepositoryPort;
      invoices: InvoiceRepositoryPort;
      archives: ExportArchivePort;
      storage: FileStoragePort;
      /** The single-invoice endpoints' own use cases: the archive's documents are their answers, byte for byte. */
      pdf: DownloadInvoicePdfUseCase;
      eInvoice: DownloadEInvoiceUseCase;
      settings: RunExportSettings;
      /** Where a failure's detail goes (the log), with the export's id; the client sees only the fixed text. */
      report?: (failure: ExportFailureReport) => void;
      /** The runner's metrics. */
      observer?: ExportRunObserver;
      /** Unix ms. */
      now?: () => number;
    },
  ) {}

  /** Runs one export if one waits; false when none did. */
  async execute(): Promise<boolean> {
    const now = this.now();
    const claimed = await this.deps.exports.claimNext(now, now + this.deps.settings.leaseMs);
    if (!claimed) return false;
    this.deps.observer?.started();
    try {
      await this.run(claimed);
    } finally {
      this.deps.observer?.ended();
    }
    return true;
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private async run({ export: item, attempt }: ClaimedExport): Promise<void> {
    // What an earlier attempt may have stored before it died is never the archive.
    for (let earlier = 1; earlier < attempt; earlier += 1) await this.deps.storage.delete(exportArchiveKey(item.id, earlier)).catch(() => undefined);
    if (attempt > 1) await this.sweepStaging().catch(() => undefined);
    if (attempt > this.deps.settings.maxAttempts) {
      await this.finishFailed(item, attempt, 'cancelled', `Its runners stopped ${this.deps.settings.maxAttempts} times before it finished.`);
      return;
    }
    let builder: ArchiveBuilder | null = null;
    try {
      const criteria = exportCriteria(item.filters, { directory: item.directory, now: new Date(item.created * 1000), timeZone: this.deps.settings.timeZone });
      const { invoices } = await step('database', () => this.deps.invoices.list({ ...criteria, page: 1, perPage: this.deps.settings.maxInvoices + 1 }));
      if (invoices.length > this.deps.settings.maxInvoices) {
        await this.finishFailed(item, attempt, 'cancelled', `More than ${this.deps.settings.maxInvoices} invoices match the filters now.`);
        return;
      }
      const started = await step('database', () =>
        this.deps.exports.start(item.id, attempt, { total: invoices.length, started: this.seconds(), leaseUntilMs: this.leaseUntil() }),
      );
      if (!started) return;

      const opened = await step('storage', () => this.deps.archives.create({ exportId: item.id, attempt }));
      builder = opened;
      const written = await this.write(item, attempt, invoices, opened);
      if (written === 'lost') return;
      const archive = await step('storage', () => opened.finish());
      const key = exportArchiveKey(item.id, attempt);
      try {
        await this.deps.storage.putFile(key, archive.localPath, archive.size, 'application/zip', archive.sha256);
      } catch (error) {
        await this.deps.storage.delete(key).catch(() => undefined);
        await this.finishFailed(item, attempt, 'storage', error);
        return;
      }
      const finished = this.seconds();
      const marked = await step('database', () =>
        this.deps.exports.succeed(item.id, attempt, {
          archiveKey: key,
          size: archive.size,
          sha256: archive.sha256,
          done: invoices.length,
          finished,
          expires: finished + this.deps.settings.retentionHours * 3600,
          maxKeptBytes: this.deps.settings.maxKeptBytes,
        }),
      );
      if (marked === 'succeeded') {
        this.deps.observer?.succeeded(archive.size);
        return;
      }
      // Cancelled (or taken over) while storing, or past the directory's budget: the archive is nobody's.
      await this.deps.storage.delete(key).catch(() => undefined);
      if (marked === 'over-budget') {
        await this.finishFailed(item, attempt, 'storage', `An archive of ${archive.size} bytes would take the directory past EXPORT_STORAGE_MB_PER_DIRECTORY.`);
      }
    } catch (error) {
      // A passing fault (a renderer down, the database busy): another attempt, here or on another runner, takes it up
      // soon; after the last one the export fails with the fixed text of what failed.
      const failure = error instanceof ExportStepError ? error.failure : 'rendering';
      const detail = error instanceof ExportStepError ? error.detail : error;
      if (attempt >= this.deps.settings.maxAttempts) {
        // Finished (failed, the detail logged): nothing for the runner to back off from.
        await this.finishFailed(item, attempt, failure, detail);
        return;
      }
      this.report({ exportId: item.id, directory: item.directory, attempt, failure, detail, final: false });
      await this.deps.exports.progress(item.id, attempt, 0, this.now()).catch(() => undefined);
      // The runner backs off before its next claim.
      throw detail;
    } finally {
      await builder?.discard();
    }
  }

  /**
   * Removes staged archives (temporary files) of attempts that are no longer running: a runner killed mid-export
   * cannot remove its own. How many were removed.
   */
  sweepStaging(): Promise<number> {
    return this.deps.archives.sweep((exportId, attempt) => this.deps.exports.isRunning(exportId, attempt));
  }

  /** Writes the CSV, every invoice's documents and the manifest; 'lost' when the attempt was cancelled or taken over. */
  private async write(item: Export, attempt: number, invoices: Invoice[], builder: ArchiveBuilder): Promise<'written' | 'lost'> {
    const items = invoices.map(toInvoiceListItem);
    if (item.csv) await step('storage', () => builder.add('invoices.csv', invoicesCsv(items)));
    const listed: Array<{ id: number; nr: string; files: ArchiveMember[] }> = [];
    // Documents made ahead of the one being written: the promise, and its bytes once made (null while rendering).
    const ahead: Array<{ made: Promise<Array<{ path: string; data: Buffer | string }>>; bytes: number | null }> = [];
    let largest = 0;
    const requestId = `export-${item.id}-${attempt}`;
    const make = (index: number) => {
      const slot: (typeof ahead)[number] = { made: this.documentsOf(item, invoices[index]!.id, requestId), bytes: null };
      slot.made.then(
        (documents) => {
          slot.bytes = documents.reduce((sum, document) => sum + byteLength(document.data), 0);
          largest = Math.max(largest, slot.bytes);
        },
        // Awaited in order below; a rejection before its turn must not count as unhandled.
        () => undefined,
      );
      return slot;
    };
    const heldBytes = () => ahead.reduce((sum, slot) => sum + (slot.bytes ?? largest), 0);
    let nextToMake = 0;
    let lastProgress = this.now();
    for (let index = 0; index < invoices.length; index += 1) {
      // The one to write is always made; more only within the count and the bytes held ahead.
      while (
        nextToMake < invoices.length &&
        (nextToMake === index || (nextToMake <= index + this.deps.settings.renderAhead && heldBytes() < this.deps.settings.renderAheadBytes))
      )
        ahead.push(make(nextToMake++));
      const next = ahead.shift()!;
      // Shifted out of `ahead`: once in the ZIP, the documents' Buffers are held by nothing.
      const documents = await step('rendering', () => next.made);
      const files: ArchiveMember[] = [];
      for (const document of documents) files.push(await step('storage', () => builder.add(document.path, document.data)));
      listed.push({ id: items[index]!.id, nr: items[index]!.nr, files });
      if (this.now() - lastProgress >= this.deps.settings.progressIntervalMs) {
        lastProgress = this.now();
        if (!(await step('database', () => this.deps.exports.progress(item.id, attempt, index + 1, this.leaseUntil())))) return 'lost';
      }
    }
    await step('storage', () => builder.add('manifest.json', exportManifest(item, listed)));
    return (await step('database', () => this.deps.exports.progress(item.id, attempt, invoices.length, this.leaseUntil()))) ? 'written' : 'lost';
  }

  /** The invoice's documents as the single-invoice endpoints answer them; none when it was deleted since the snapshot. */
  private async documentsOf(item: Export, invoiceId: number, requestId: string): Promise<Array<{ path: string; data: Buffer | string }>> {
    const made: Array<{ path: string; data: Buffer | string }> = [];
    try {
      for (const document of item.documents)
        made.push({ path: exportMemberPath(document, invoiceId), data: await this.document(item, invoiceId, document, requestId) });
    } catch (error) {
      if (error instanceof InvoiceNotFoundError) return [];
      throw error;
    }
    return made;
  }

  private async document(item: Export, invoiceId: number, document: ExportDocument, requestId: string): Promise<Buffer | string> {
    const { directory } = item;
    if (document === 'ubl' || document === 'cii') {
      const answer = await this.deps.eInvoice.execute({
        directory,
        invoiceId,
        query: [
          ['format', document],
          ['lang', item.lang],
        ],
      });
      if (answer.kind !== 'xml') throw new Error('The e-invoice was not written.');
      return answer.xml;
    }
    const query: Array<[string, string]> = [
      ['lang', item.lang],
      ['duplicate', String(item.duplicate)],
      ['format', document],
    ];
    const answer = await this.deps.pdf.execute({ directory, invoiceId, query, requestId, bulk: true });
    if (answer.kind !== 'pdf') throw new Error('The PDF was not rendered.');
    return answer.pdf;
  }

  /** Marks the export failed with the fixed text of `failure`; the detail goes to the report (the log) with its id. */
  private async finishFailed(item: Export, attempt: number, failure: ExportFailure, detail: unknown): Promise<void> {
    this.report({ exportId: item.id, directory: item.directory, attempt, failure, detail, final: true });
    const finished = this.seconds();
    await this.deps.exports.fail(item.id, attempt, { error: EXPORT_FAILURES[failure], finished, expires: finished + this.deps.settings.retentionHours * 3600 });
  }

  private report(failure: ExportFailureReport): void {
    this.deps.observer?.failed(failure.failure, failure.final);
    this.deps.report?.(failure);
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  private leaseUntil(): number {
    return this.now() + this.deps.settings.leaseMs;
  }
}

function byteLength(data: Buffer | string): number {
  return typeof data === 'string' ? Buffer.byteLength(data) : data.length;
}
