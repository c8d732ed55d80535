import { DomainError } from '../../shared/domain-error.js';
import { ServiceUnavailableError } from '../../shared/common.errors.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import type { JobQueuePort } from '../../ports/job-queue.port.js';
import { jobDeadline } from '../../jobs/job-definitions.js';
import { InvoiceNotFoundError } from '../invoices.errors.js';
import { parseInvoicePdfQuery } from './invoice-pdf.query.js';

export interface InvoicePdf {
  invoiceNr: string;
  pdf: Buffer;
}

/** GET /invoices/{id}/pdf: a missing invoice beats an invalid query; the render runs as a job. */
export class DownloadInvoicePdfUseCase {
  constructor(
    private readonly deps: {
      invoices: InvoiceRepositoryPort;
      storage: FileStoragePort;
      queue: JobQueuePort;
      jobTimeoutMs: number;
      newId: () => string;
      /** Unix ms; the system clock by default. */
      now?: () => number;
    },
  ) {}

  async execute(input: { directory: string; invoiceId: number; query: Iterable<[string, string]>; requestId: string }): Promise<InvoicePdf> {
    // A cheap indexed check first: a missing invoice is 404 even when the query is also invalid.
    if (!(await this.deps.invoices.exists(input.directory, input.invoiceId))) throw new InvoiceNotFoundError();
    const { lang, duplicate } = parseInvoicePdfQuery(input.query);
    const id = this.deps.newId();
    const pdfKey = `pdf/${id}.pdf`;
    try {
      const rendered = await this.deps.queue.runAndWait(
        'render-invoice-pdf',
        {
          directory: input.directory,
          invoiceId: input.invoiceId,
          lang,
          duplicate,
          pdfKey,
          requestId: input.requestId,
          deadline: jobDeadline((this.deps.now ?? Date.now)(), this.deps.jobTimeoutMs),
        },
        { timeoutMs: this.deps.jobTimeoutMs, jobId: `pdf-${id}` },
      );
      return { invoiceNr: rendered.invoiceNr, pdf: await this.deps.storage.getBuffer(pdfKey) };
    } catch (error) {
      if (error instanceof DomainError) throw error;
      // A crashed or missing renderer is a passing fault: the client may retry.
      throw new ServiceUnavailableError('The PDF could not be rendered right now.');
    } finally {
      await this.deps.storage.delete(pdfKey).catch(() => undefined);
    }
  }
}
