import type { JobPayloads, JobResults, JobRun } from '../../jobs/job-definitions.js';
import type { ClientRepositoryPort } from '../../ports/client-repository.port.js';
import type { ContentHasherPort } from '../../ports/content-hasher.port.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import type { EInvoiceWriterPort } from '../../ports/e-invoice-writer.port.js';
import type { PdfRendererPort } from '../../ports/pdf-renderer.port.js';
import { loadInvoiceDocument } from '../invoice-document/load-invoice-document.js';
import { pdfCacheKey, pdfVersionOf } from '../invoice-pdf-cache/pdf-version.js';
import { DomainError } from '../../shared/domain-error.js';
import { stageTimer } from '../../jobs/stage-timer.js';
import { DocumentNotWritableError } from '../invoices.errors.js';

type RenderJob = JobPayloads['render-invoice-pdf'];

/**
 * The stages of a render job, timed for the operator (`onStage`): `data` (the invoice and its seller read, the document
 * built and versioned), `cache_lookup` (is the PDF cached already; it runs beside the render, timed on its own),
 * `render` (the renderer's whole call: a wait for a page included, which the worker tells apart), `facturx` (the PDF
 * made Factur-X), `hand_over` (the PDF handed to the waiting caller before the job ends, where the queue can:
 * JobRun `handOverPdf`), `store` (the PDF written).
 */
export type PdfJobStage = 'data' | 'cache_lookup' | 'render' | 'facturx' | 'hand_over' | 'store';
type RenderResult = JobResults['render-invoice-pdf'];
/** A look for a cached copy under way: `found` stays undefined until it ends. */
type CacheLook = { key: string; found: boolean | undefined; settled: Promise<boolean> };

/**
 * Job handler (in-process queue and worker alike): prints one invoice as PDF, with `cache` kept under the version of what
 * it read and printed, so the key always matches the bytes; otherwise, or when the cache cannot keep it, under the
 * caller's key. Running it twice is harmless (docs/contribute/decisions/0029-pdf-cache-by-printed-version.md).
 */
export class RenderInvoicePdfUseCase {
  constructor(
    private readonly deps: {
      invoices: InvoiceRepositoryPort;
      clients: ClientRepositoryPort;
      renderer: PdfRendererPort;
      storage: FileStoragePort;
      hasher: ContentHasherPort;
      /** The version of the layout the renderer prints with; part of every PDF's version. */
      templateVersion: string;
      /** IANA zone the printed dates are read in (APP_TIMEZONE). */
      timeZone: string;
      /** Makes Factur-X of a printed PDF; needed for `format: 'facturx'` jobs only. */
      eInvoiceWriter?: EInvoiceWriterPort;
      /** Unix ms; the system clock by default. */
      now?: () => number;
      /** Told how long each stage of a job took (ms), as it ends; stages a job skips are not told. */
      onStage?: (stage: PdfJobStage, ms: number) => void;
    },
  ) {}

  async execute(job: RenderJob, run?: JobRun): Promise<RenderResult> {
    const stage = stageTimer(this.deps.onStage, this.deps.now ?? Date.now);
    const loaded = await loadInvoiceDocument(this.deps, job, () => job);
    const { invoice, document } = loaded;
    // Factur-X: the e-invoice of the same document goes inside, and into the version.
    const eInvoice = job.format === 'facturx' ? loaded.eInvoice() : null;
    const writer = eInvoice ? this.writer() : null;
    const version = pdfVersionOf(
      document,
      this.deps.templateVersion,
      this.deps.hasher,
      eInvoice && writer ? { writer: writer.version, invoice: eInvoice } : undefined,
    );
    const unrendered: RenderResult = { pdfKey: job.pdfKey, bytes: 0, invoiceNr: invoice.nr, version };
    stage('data');

    // A job that starts after its caller gave up (a backlog, a retry) is not worth a render.
    if (this.late(job)) return unrendered;
    const cacheKey = job.cache ? pdfCacheKey(version, job.directory) : null;
    // Another request for the same page may have rendered it meanwhile. The look runs beside the wait for a page and
    // the render: a render that gets its page after the look found the PDF prints nothing, one that got it before is
    // spent (two requests for one new PDF met), the found copy answers either way. A failed look is a miss.
    const look = cacheKey ? this.lookUp(cacheKey) : null;
    const printed = look ? await this.deps.renderer.render(document, { stillWanted: () => look.found !== true }) : await this.deps.renderer.render(document);
    if (look && (await look.settled)) {
      if (printed) stage('render');
      return { ...unrendered, pdfKey: look.key };
    }
    if (!printed) throw new Error('The renderer printed nothing though the PDF was not found in the cache.');
    stage('render');
    let pdf = printed;
    if (eInvoice && writer) {
      pdf = await facturXOf(writer, printed, eInvoice);
      stage('facturx');
    }
    // Nobody will fetch a PDF that is ready after the caller gave up: storing it would only leave it behind.
    if (this.late(job)) return unrendered;
    let cacheError: string | undefined;
    if (cacheKey) {
      const kept: RenderResult = { ...unrendered, pdfKey: cacheKey, bytes: pdf.length };
      // The caller may answer now, while the PDF goes into the cache; a failed hand-over leaves it to the job's end.
      let handedOver = false;
      if (run?.handOverPdf) {
        handedOver = await run.handOverPdf(kept, pdf).then(
          () => true,
          () => false,
        );
        stage('hand_over');
      }
      try {
        await this.deps.storage.putBuffer(cacheKey, pdf, 'application/pdf');
        stage('store');
        return kept;
      } catch (error) {
        // The client still gets its PDF through the hand-over key; the caller logs why it was not kept.
        cacheError = error instanceof Error ? error.message : String(error);
        // Handed over already: nobody will read a hand-over copy. The process that ran the job logs the reason.
        if (handedOver) return { ...unrendered, bytes: pdf.length, cacheError };
      }
    }
    await this.deps.storage.putBuffer(job.pdfKey, pdf, 'application/pdf');
    stage('store');
    return { ...unrendered, bytes: pdf.length, ...(cacheError === undefined ? {} : { cacheError }) };
  }

  /** Is the PDF in the cache already: `found` once known, `settled` when the look ended (timed as `cache_lookup`). */
  private lookUp(key: string): CacheLook {
    const now = this.deps.now ?? Date.now;
    const started = now();
    const look: CacheLook = { key, found: undefined, settled: Promise.resolve(false) };
    look.settled = this.deps.storage
      .exists(key)
      .catch(() => false)
      .then((found) => {
        look.found = found;
        this.deps.onStage?.('cache_lookup', Math.max(0, now() - started));
        return found;
      });
    return look;
  }

  private writer(): EInvoiceWriterPort {
    if (!this.deps.eInvoiceWriter) throw new Error('A Factur-X job reached a renderer without an e-invoice writer.');
    return this.deps.eInvoiceWriter;
  }

  private late(job: RenderJob): boolean {
    return (this.deps.now ?? Date.now)() > job.deadline;
  }
}

/** Factur-X of the printed PDF; a writer that refuses this invoice's data fails for good (500), not as a passing fault. */
async function facturXOf(writer: EInvoiceWriterPort, printed: Buffer, eInvoice: Parameters<EInvoiceWriterPort['facturX']>[1]): Promise<Buffer> {
  try {
    return await writer.facturX(printed, eInvoice);
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new DocumentNotWritableError('facturx', error instanceof Error ? error.message : String(error));
  }
}
