import type { JobPayloads, JobResults } from '../../jobs/job-definitions.js';
import type { ClientRepositoryPort } from '../../ports/client-repository.port.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import type { PdfRendererPort } from '../../ports/pdf-renderer.port.js';
import { buildInvoiceDocument } from '../invoice-document/build-invoice-document.js';
import { InvoiceNotFoundError } from '../invoices.errors.js';

/**
 * Job handler (in-process queue and worker alike): prints one invoice of a
 * directory as PDF and stores it under the key the caller chose. Running it
 * twice overwrites the same object, so a retried job is harmless.
 */
export class RenderInvoicePdfUseCase {
  constructor(
    private readonly deps: {
      invoices: InvoiceRepositoryPort;
      clients: ClientRepositoryPort;
      renderer: PdfRendererPort;
      storage: FileStoragePort;
      /** IANA zone the printed dates are read in (APP_TIMEZONE). */
      timeZone: string;
      /** Unix ms; the system clock by default. */
      now?: () => number;
    },
  ) {}

  async execute(job: JobPayloads['render-invoice-pdf']): Promise<JobResults['render-invoice-pdf']> {
    const invoice = await this.deps.invoices.findDetail(job.directory, job.invoiceId);
    if (!invoice) throw new InvoiceNotFoundError();
    const client = await this.deps.clients.findByDirectory(job.directory);
    // The invoice exists, so its directory must: a missing client is a data fault, not a 404.
    if (!client) throw new Error(`Client directory "${job.directory}" has no company details to print as seller.`);

    // A job that starts after its caller gave up (a backlog, a retry) is not worth a render.
    if (this.late(job)) return { pdfKey: job.pdfKey, bytes: 0, invoiceNr: invoice.nr };
    const document = buildInvoiceDocument(invoice, client.company, job.lang, job.duplicate, this.deps.timeZone);
    const pdf = await this.deps.renderer.render(document);
    // Nobody will fetch a PDF that is ready after the caller gave up: storing it would only leave it behind.
    if (this.late(job)) return { pdfKey: job.pdfKey, bytes: 0, invoiceNr: invoice.nr };
    await this.deps.storage.putBuffer(job.pdfKey, pdf, 'application/pdf');
    return { pdfKey: job.pdfKey, bytes: pdf.length, invoiceNr: invoice.nr };
  }

  private late(job: JobPayloads['render-invoice-pdf']): boolean {
    return (this.deps.now ?? Date.now)() > job.deadline;
  }
}
