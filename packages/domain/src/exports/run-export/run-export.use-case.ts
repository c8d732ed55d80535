import type { DownloadEInvoiceUseCase } from '../../invoices/download-e-invoice/download-e-invoice.use-case.js';
import type { DownloadInvoicePdfUseCase } from '../../invoices/download-invoice-pdf/download-invoice-pdf.use-case.js';
import { InvoiceNotFoundError } from '../../invoices/invoices.errors.js';
import { toInvoiceListItem } from '../../events/invoice-list-item.js';
import type { ArchiveBuilder, ArchiveMember, ExportArchivePort } from '../../ports/export-archive.port.js';
import type { ExportRepositoryPort } from '../../ports/export-repository.port.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import type { Invoice } from '../../invoices/invoice.js';
import { exportArchiveKey, exportMemberPath, type ClaimedExport, type Export, type ExportDocument } from '../export.js';
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
  /** Attempts before an export that keeps failing on something passing (a renderer down) is marked failed. */
  maxAttempts: number;
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
      /** Unix ms. */
      now?: () => number;
    },
  ) {}

  /** Runs one export if one waits; false when none did. */
  async execute(): Promise<boolean> {
    const now = this.now();
    const claimed = await this.deps.exports.claimNext(now, now + this.deps.settings.leaseMs);
    if (!claimed) return false;
    await this.run(claimed);
    return true;
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private async run({ export: item, attempt }: ClaimedExport): Promise<void> {
    // What an earlier attempt may have stored before it died is never the archive.
    for (let earlier = 1; earlier < attempt; earlier += 1) await this.deps.storage.delete(exportArchiveKey(item.id, earlier)).catch(() => undefined);
    if (attempt > this.deps.settings.maxAttempts) {
      await this.finishFailed(item, attempt, `The export did not finish in ${this.deps.settings.maxAttempts} attempts.`);
      return;
    }
    const criteria = exportCriteria(item.filters, { directory: item.directory, now: new Date(item.created * 1000), timeZone: this.deps.settings.timeZone });
    const { invoices } = await this.deps.invoices.list({ ...criteria, page: 1, perPage: this.deps.settings.maxInvoices + 1 });
    if (invoices.length > this.deps.settings.maxInvoices) {
      await this.finishFailed(item, attempt, `More than ${this.deps.settings.maxInvoices} invoices match the filters now.`);
      return;
    }
    if (!(await this.deps.exports.start(item.id, attempt, { total: invoices.length, started: this.seconds(), leaseUntilMs: this.leaseUntil() }))) return;

    const builder = await this.deps.archives.create();
    try {
      const written = await this.write(item, attempt, invoices, builder);
      if (written === 'lost') return;
      const archive = await builder.finish();
      const key = exportArchiveKey(item.id, attempt);
      try {
        await this.deps.storage.putFile(key, archive.localPath, archive.size, 'application/zip', archive.sha256);
      } catch (error) {
        await this.deps.storage.delete(key).catch(() => undefined);
        await this.finishFailed(item, attempt, `The archive could not be stored: ${messageOf(error)}`);
        return;
      }
      const finished = this.seconds();
      const marked = await this.deps.exports.succeed(item.id, attempt, {
        archiveKey: key,
        size: archive.size,
        sha256: archive.sha256,
        done: invoices.length,
        finished,
        expires: finished + this.deps.settings.retentionHours * 3600,
      });
      // Cancelled (or taken over) while storing: the archive is nobody's.
      if (!marked) await this.deps.storage.delete(key).catch(() => undefined);
    } catch (error) {
      // A passing fault (a renderer down, the database busy): another attempt, here or on another runner, takes it up
      // soon; after the last one the export fails with the reason.
      if (attempt >= this.deps.settings.maxAttempts) await this.finishFailed(item, attempt, messageOf(error));
      else await this.deps.exports.progress(item.id, attempt, 0, this.now()).catch(() => undefined);
      throw error;
    } finally {
      await builder.discard();
    }
  }

  /** Writes the CSV, every invoice's documents and the manifest; 'lost' when the attempt was cancelled or taken over. */
  private async write(item: Export, attempt: number, invoices: Invoice[], builder: ArchiveBuilder): Promise<'written' | 'lost'> {
    const items = invoices.map(toInvoiceListItem);
    if (item.csv) await builder.add('invoices.csv', invoicesCsv(items));
    const listed: Array<{ id: number; nr: string; files: ArchiveMember[] }> = [];
    const ahead: Array<Promise<Array<{ path: string; data: Buffer | string }>>> = [];
    const requestId = `export-${item.id}-${attempt}`;
    const make = (index: number) => {
      const promise = this.documentsOf(item, invoices[index]!.id, requestId);
      // Awaited in order below; a rejection before its turn must not count as unhandled.
      promise.catch(() => undefined);
      return promise;
    };
    let nextToMake = 0;
    let lastProgress = this.now();
    for (let index = 0; index < invoices.length; index += 1) {
      while (nextToMake < invoices.length && nextToMake <= index + this.deps.settings.renderAhead) ahead.push(make(nextToMake++));
      const documents = await ahead.shift()!;
      const files: ArchiveMember[] = [];
      for (const document of documents) files.push(await builder.add(document.path, document.data));
      listed.push({ id: items[index]!.id, nr: items[index]!.nr, files });
      if (this.now() - lastProgress >= this.deps.settings.progressIntervalMs) {
        lastProgress = this.now();
        if (!(await this.deps.exports.progress(item.id, attempt, index + 1, this.leaseUntil()))) return 'lost';
      }
    }
    await builder.add('manifest.json', exportManifest(item, listed));
    return (await this.deps.exports.progress(item.id, attempt, invoices.length, this.leaseUntil())) ? 'written' : 'lost';
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

  private async finishFailed(item: Export, attempt: number, error: string): Promise<void> {
    const finished = this.seconds();
    await this.deps.exports.fail(item.id, attempt, { error: error.slice(0, 1000), finished, expires: finished + this.deps.settings.retentionHours * 3600 });
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  private leaseUntil(): number {
    return this.now() + this.deps.settings.leaseMs;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
