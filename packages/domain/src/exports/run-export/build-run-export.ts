import { DownloadEInvoiceUseCase } from '../../invoices/download-e-invoice/download-e-invoice.use-case.js';
import { DownloadInvoicePdfUseCase } from '../../invoices/download-invoice-pdf/download-invoice-pdf.use-case.js';
import type { ClientRepositoryPort } from '../../ports/client-repository.port.js';
import type { ContentHasherPort } from '../../ports/content-hasher.port.js';
import type { EInvoiceWriterPort } from '../../ports/e-invoice-writer.port.js';
import type { ExportArchivePort } from '../../ports/export-archive.port.js';
import type { ExportRepositoryPort } from '../../ports/export-repository.port.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import type { JobQueuePort } from '../../ports/job-queue.port.js';
import { RunExportUseCase, type ExportFailureReport, type ExportRunObserver } from './run-export.use-case.js';

/** How long a claim lasts without renewal: a runner that died is replaced after this. */
export const EXPORT_LEASE_MS = 30_000;

/**
 * How long an export's render may wait on the queue: it comes after every render a request waits for, so under
 * interactive load it waits longer than a request would.
 */
export const EXPORT_RENDER_TIMEOUT_MS = 120_000;

/** Bytes of documents (PDFs as Buffers) one export holds ahead of the one it writes, beside the count (renderAhead). */
export const EXPORT_RENDER_AHEAD_BYTES = 16 * 1024 * 1024;

/**
 * The runner of exports, the same in the API process (embedded profile) and in workers: its documents come from the
 * single-invoice endpoints' own use cases (renders as bulk jobs on the queue, through the PDF cache).
 */
export function buildRunExport(deps: {
  exports: ExportRepositoryPort;
  invoices: InvoiceRepositoryPort;
  clients: ClientRepositoryPort;
  storage: FileStoragePort;
  queue: JobQueuePort;
  hasher: ContentHasherPort;
  eInvoiceWriter: EInvoiceWriterPort;
  archives: ExportArchivePort;
  templateVersion: string;
  timeZone: string;
  /** Whether the PDF cache is on (PDF_CACHE_MAX_OBJECTS > 0). */
  pdfCache: boolean;
  /** Renders in flight for one export: the queue's concurrency, so the renderer is kept busy. */
  renderAhead: number;
  /** Bytes of documents held ahead for one export; EXPORT_RENDER_AHEAD_BYTES when not given. */
  renderAheadBytes?: number;
  maxInvoices: number;
  retentionHours: number;
  newId: () => string;
  /** Shorter in tests (a killed runner is replaced sooner). */
  leaseMs?: number;
  /** EXPORT_STORAGE_MB_PER_DIRECTORY in bytes. */
  maxKeptBytes: number;
  /** Where a failure's detail goes (the log), with the export's id. */
  report?: (failure: ExportFailureReport) => void;
  /** The runner's metrics. */
  observer?: ExportRunObserver;
}): RunExportUseCase {
  const pdf = new DownloadInvoicePdfUseCase({
    invoices: deps.invoices,
    clients: deps.clients,
    storage: deps.storage,
    queue: deps.queue,
    hasher: deps.hasher,
    templateVersion: deps.templateVersion,
    eInvoiceWriterVersion: deps.eInvoiceWriter.version,
    timeZone: deps.timeZone,
    cache: deps.pdfCache,
    jobTimeoutMs: EXPORT_RENDER_TIMEOUT_MS,
    newId: deps.newId,
  });
  const eInvoice = new DownloadEInvoiceUseCase({
    invoices: deps.invoices,
    clients: deps.clients,
    writer: deps.eInvoiceWriter,
    hasher: deps.hasher,
    timeZone: deps.timeZone,
  });
  return new RunExportUseCase({
    exports: deps.exports,
    invoices: deps.invoices,
    archives: deps.archives,
    storage: deps.storage,
    pdf,
    eInvoice,
    report: deps.report,
    observer: deps.observer,
    settings: {
      timeZone: deps.timeZone,
      maxInvoices: deps.maxInvoices,
      retentionHours: deps.retentionHours,
      leaseMs: deps.leaseMs ?? EXPORT_LEASE_MS,
      progressIntervalMs: 500,
      renderAhead: Math.max(1, deps.renderAhead),
      renderAheadBytes: deps.renderAheadBytes ?? EXPORT_RENDER_AHEAD_BYTES,
      maxAttempts: 3,
      maxKeptBytes: deps.maxKeptBytes,
    },
  });
}
