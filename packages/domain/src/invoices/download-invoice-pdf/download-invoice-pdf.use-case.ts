import { DomainError } from '../../shared/domain-error.js';
import { ServiceUnavailableError, StoredObjectMissingError } from '../../shared/common.errors.js';
import type { ClientRepositoryPort } from '../../ports/client-repository.port.js';
import type { ContentHasherPort } from '../../ports/content-hasher.port.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import type { JobQueuePort } from '../../ports/job-queue.port.js';
import { jobDeadline } from '../../jobs/job-definitions.js';
import type { EInvoice } from '../e-invoice/e-invoice.js';
import type { DocumentLanguage } from '../invoice-document/invoice-document.js';
import { loadInvoiceDocument } from '../invoice-document/load-invoice-document.js';
import { pdfCacheKey, pdfVersionOf, type FacturXPart } from '../invoice-pdf-cache/pdf-version.js';
import { downloadKey, type PrintedVersion, type RecentPdfs } from '../invoice-pdf-cache/recent-pdfs.js';
import { parseInvoicePdfQuery, type PdfFormat } from './invoice-pdf.query.js';

/** The answer to a download: the PDF, or word that the client's copy (by version) is current. */
export type InvoicePdf =
  { kind: 'not-modified'; invoiceNr: string; version: string } | { kind: 'pdf'; invoiceNr: string; version: string; pdf: Buffer; source: 'cache' | 'render' };

/** What happened in the PDF cache on one request, for logs and metrics; `error` when storage failed. */
export type PdfCacheEvent = { key: string; requestId: string } & (
  { outcome: 'hit' | 'miss' | 'not-modified' } | { outcome: 'read-failed' | 'store-failed'; error: string }
);

/**
 * GET /invoices/{id}/pdf. A missing invoice beats an invalid query. The
 * document is built here (a database read) to learn its version: a client
 * that holds that version gets `not-modified` before anything is rendered,
 * and a PDF kept in the cache under it is read from storage, with no job and
 * no browser. Otherwise the render runs as a job, which keeps the PDF in the
 * cache for next time. A cache that cannot be read or written only costs a
 * render; the client still gets its PDF.
 */
export class DownloadInvoicePdfUseCase {
  constructor(
    private readonly deps: {
      invoices: InvoiceRepositoryPort;
      clients: ClientRepositoryPort;
      storage: FileStoragePort;
      queue: JobQueuePort;
      hasher: ContentHasherPort;
      /** The version of the Factur-X writer (`EInvoiceWriterPort.version`); needed for `format=facturx` only. */
      eInvoiceWriterVersion?: string;
      /** The version of the PDF layout; the same in the API and the workers of one release. */
      templateVersion: string;
      /** IANA zone the printed dates are read in (APP_TIMEZONE). */
      timeZone: string;
      /** False turns the PDF cache off: every download renders (ETags and 304 stay). */
      cache: boolean;
      jobTimeoutMs: number;
      newId: () => string;
      onCacheEvent?: (event: PdfCacheEvent) => void;
      /** What this process remembers of the PDFs it served; none when absent. */
      recent?: RecentPdfs;
      /** Unix ms; the system clock by default. */
      now?: () => number;
    },
  ) {}

  async execute(input: {
    directory: string;
    invoiceId: number;
    query: Iterable<[string, string]>;
    requestId: string;
    /** Whether the client already holds this version (its If-None-Match). */
    clientHolds?: (version: string) => boolean;
    /** An export's render: it waits behind every render a request waits for (RunJobOptions.bulk). */
    bulk?: boolean;
  }): Promise<InvoicePdf> {
    // The data version is read first: what is printed below is at least as new as it.
    const recent = this.deps.recent;
    const dataVersion = recent ? await this.deps.invoices.dataVersion(input.directory) : '';
    const remembered = recent ? this.remembered(recent, input, dataVersion) : null;
    const {
      query: { lang, duplicate, format },
      printed: { version, invoiceNr },
    } = remembered ?? (await this.print(input, dataVersion));
    const key = pdfCacheKey(version, input.directory);

    if (input.clientHolds?.(version)) {
      this.deps.onCacheEvent?.({ outcome: 'not-modified', key, requestId: input.requestId });
      return { kind: 'not-modified', invoiceNr, version };
    }
    const cached = this.deps.cache ? await this.readCached(version, key, input.requestId) : 'off';
    if (cached instanceof Buffer) return { kind: 'pdf', invoiceNr, version, pdf: cached, source: 'cache' };
    // A cached copy that is there but cannot be read would stop the job from rendering: render past the cache.
    const rendered = await this.render({ ...input, lang, duplicate, format }, version, cached === 'miss');
    if (this.deps.cache && rendered.kind === 'pdf') recent?.rememberPdf(rendered.version, rendered.pdf);
    return rendered;
  }

  /**
   * What this process printed for the same download while the directory's
   * data was at the same version, or null. An invalid query is left to the
   * full path, where a missing invoice (404) comes before it (422).
   */
  private remembered(recent: RecentPdfs, input: { directory: string; invoiceId: number; query: Iterable<[string, string]> }, dataVersion: string) {
    let query: ReturnType<typeof parseInvoicePdfQuery>;
    try {
      query = parseInvoicePdfQuery(input.query);
    } catch {
      return null;
    }
    const printed = recent.printed(downloadKey(input.directory, input.invoiceId, query), dataVersion);
    return printed ? { query, printed } : null;
  }

  /** Reads the invoice and its seller, prints them as a document and hashes it; remembered under `dataVersion`. */
  private async print(
    input: { directory: string; invoiceId: number; query: Iterable<[string, string]> },
    dataVersion: string,
  ): Promise<{ query: { lang: DocumentLanguage; duplicate: boolean; format: PdfFormat }; printed: PrintedVersion }> {
    const { invoice, document, options: query, eInvoice } = await loadInvoiceDocument(this.deps, input, () => parseInvoicePdfQuery(input.query));
    const facturX = query.format === 'facturx' ? this.facturXPart(eInvoice) : undefined;
    const printed = { version: pdfVersionOf(document, this.deps.templateVersion, this.deps.hasher, facturX), invoiceNr: invoice.nr };
    this.deps.recent?.rememberPrinted(downloadKey(input.directory, input.invoiceId, query), dataVersion, printed);
    return { query, printed };
  }

  /** What Factur-X adds to the version: the same e-invoice the render job will embed. */
  private facturXPart(eInvoice: () => EInvoice): FacturXPart {
    if (this.deps.eInvoiceWriterVersion === undefined) throw new Error('Factur-X asked of an API without an e-invoice writer.');
    return { writer: this.deps.eInvoiceWriterVersion, invoice: eInvoice() };
  }

  /** The cached PDF, `miss`, or `unreadable` when storage failed (reported). */
  private async readCached(version: string, key: string, requestId: string): Promise<Buffer | 'miss' | 'unreadable'> {
    const kept = this.deps.recent?.pdf(version);
    if (kept) {
      this.deps.onCacheEvent?.({ outcome: 'hit', key, requestId });
      return kept;
    }
    try {
      const pdf = nonEmpty(await this.deps.storage.getBuffer(key), key);
      this.deps.onCacheEvent?.({ outcome: 'hit', key, requestId });
      this.deps.recent?.rememberPdf(version, pdf);
      return pdf;
    } catch (error) {
      // A missing object is a miss; any other failure is a failed read (no second request to tell them apart).
      const missing = error instanceof StoredObjectMissingError;
      this.deps.onCacheEvent?.(missing ? { outcome: 'miss', key, requestId } : { outcome: 'read-failed', key, requestId, error: messageOf(error) });
      return missing ? 'miss' : 'unreadable';
    }
  }

  private async render(
    input: { directory: string; invoiceId: number; lang: DocumentLanguage; duplicate: boolean; format: PdfFormat; requestId: string; bulk?: boolean },
    version: string,
    cache: boolean,
  ): Promise<InvoicePdf> {
    const id = this.deps.newId();
    const pdfKey = `pdf/${id}.pdf`;
    try {
      const rendered = await this.deps.queue.runAndWait(
        'render-invoice-pdf',
        {
          directory: input.directory,
          invoiceId: input.invoiceId,
          lang: input.lang,
          duplicate: input.duplicate,
          // Absent for a plain PDF, so a worker of the previous release runs the job as it always did.
          ...(input.format === 'facturx' ? { format: input.format } : {}),
          pdfKey,
          cache,
          requestId: input.requestId,
          deadline: jobDeadline((this.deps.now ?? Date.now)(), this.deps.jobTimeoutMs),
        },
        { timeoutMs: this.deps.jobTimeoutMs, jobId: `pdf-${id}`, ...(input.bulk ? { bulk: true } : {}) },
      );
      // The job's result came through Redis, which is not trusted with tenancy (ADR 0050): a version that is not one
      // fails here (pdfCacheKey), and only this download's hand-over key or this directory's cache key is read.
      const renderedKey = pdfCacheKey(rendered.version ?? version, input.directory);
      if (rendered.pdfKey !== pdfKey && rendered.pdfKey !== renderedKey) {
        throw new Error(`A render job answered with a key that is not this download's: ${rendered.pdfKey.slice(0, 120)}`);
      }
      if (rendered.cacheError !== undefined) {
        this.deps.onCacheEvent?.({
          outcome: 'store-failed',
          key: renderedKey,
          requestId: input.requestId,
          error: rendered.cacheError,
        });
      }
      // The queue handed the PDF over before the job's cache write (ADR 0057): no read back then.
      const pdf = rendered.pdf ?? nonEmpty(await this.deps.storage.getBuffer(rendered.pdfKey), rendered.pdfKey);
      // The hand-over copy is only there when the job kept the PDF outside the cache. Removing it is
      // not the client's wait (a leftover under pdf/ is removed by the housekeeping).
      if (rendered.pdfKey === pdfKey) void this.deps.storage.delete(pdfKey).catch(() => undefined);
      // The version of what the job printed: it differs from ours only when the data changed in between.
      return { kind: 'pdf', invoiceNr: rendered.invoiceNr, version: rendered.version ?? version, pdf, source: 'render' };
    } catch (error) {
      // Not waited for: storage may be what failed, and the answer must not wait on it (a leftover
      // under pdf/ is removed by the housekeeping).
      void this.deps.storage.delete(pdfKey).catch(() => undefined);
      if (error instanceof DomainError) throw error;
      // A crashed or missing renderer is a passing fault: the client may retry.
      throw new ServiceUnavailableError('The PDF could not be rendered right now.');
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * An empty object is never a PDF: a store that answered a write before the
 * bytes were down (s3rver did) would otherwise be served as a 200 with no body.
 * Failing the read instead gives a 503 the client can retry, or a render past the cache.
 */
function nonEmpty(pdf: Buffer, key: string): Buffer {
  if (pdf.length === 0) throw new Error(`Storage returned an empty object for ${key}`);
  return pdf;
}
