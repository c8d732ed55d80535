import type { ClientRepositoryPort } from '../../ports/client-repository.port.js';
import type { ContentHasherPort } from '../../ports/content-hasher.port.js';
import type { EInvoiceWriterPort } from '../../ports/e-invoice-writer.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import type { EInvoiceFormat } from '../e-invoice/e-invoice.js';
import { eInvoiceVersionOf } from '../e-invoice/e-invoice-version.js';
import { loadInvoiceDocument } from '../invoice-document/load-invoice-document.js';
import { parseEInvoiceQuery } from './e-invoice.query.js';

export type EInvoiceAnswer =
  | { kind: 'not-modified'; invoiceNr: string; version: string; format: EInvoiceFormat }
  | { kind: 'xml'; invoiceNr: string; version: string; format: EInvoiceFormat; xml: string };

/**
 * GET /invoices/{id}/e-invoice. The same rules as the PDF: a missing invoice
 * (or another directory's) beats an invalid query; the document is built
 * from the very document the PDF prints, so the two always agree. Writing
 * XML is cheap, so it runs here, with no job and no cache; a client holding
 * the current version gets `not-modified` without it being written.
 */
export class DownloadEInvoiceUseCase {
  constructor(
    private readonly deps: {
      invoices: InvoiceRepositoryPort;
      clients: ClientRepositoryPort;
      writer: EInvoiceWriterPort;
      hasher: ContentHasherPort;
      /** IANA zone the dates are read in (APP_TIMEZONE). */
      timeZone: string;
    },
  ) {}

  async execute(input: {
    directory: string;
    invoiceId: number;
    query: Iterable<[string, string]>;
    clientHolds?: (version: string) => boolean;
  }): Promise<EInvoiceAnswer> {
    const loaded = await loadInvoiceDocument(this.deps, input, () => parseEInvoiceQuery(input.query));
    const {
      invoice,
      options: { format },
    } = loaded;
    const eInvoice = loaded.eInvoice();
    const version = eInvoiceVersionOf(eInvoice, format, this.deps.writer.version, this.deps.hasher);
    if (input.clientHolds?.(version)) return { kind: 'not-modified', invoiceNr: invoice.nr, version, format };
    const xml = await this.deps.writer.xml(eInvoice, format);
    return { kind: 'xml', invoiceNr: invoice.nr, version, format, xml };
  }
}
