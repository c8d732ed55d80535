import type { CompanyDetails } from '../../clients/client.js';
import type { ClientRepositoryPort } from '../../ports/client-repository.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import { buildEInvoice } from '../e-invoice/build-e-invoice.js';
import type { EInvoice } from '../e-invoice/e-invoice.js';
import type { InvoiceDetail } from '../invoice.js';
import { InvoiceNotFoundError } from '../invoices.errors.js';
import { buildInvoiceDocument } from './build-invoice-document.js';
import type { DocumentLanguage, InvoiceDocument } from './invoice-document.js';

/** An invoice as printed: its data, its seller, the document, and the e-invoice of that very document. */
export interface LoadedInvoiceDocument<O> {
  invoice: InvoiceDetail;
  seller: CompanyDetails;
  document: InvoiceDocument;
  /** The print options as `options` gave them (a parsed query, say). */
  options: O;
  /** Built on demand: the PDF needs it for Factur-X only. */
  readonly eInvoice: () => EInvoice;
}

/**
 * The step the PDF download, its render job and the e-invoice share, so the three print the same
 * document: the invoice (InvoiceNotFoundError when missing), then the options (a function, so a
 * missing invoice beats an invalid query), then the directory's company as seller, then the document.
 */
export async function loadInvoiceDocument<O extends { lang: DocumentLanguage; duplicate?: boolean }>(
  deps: { invoices: InvoiceRepositoryPort; clients: ClientRepositoryPort; timeZone: string },
  at: { directory: string; invoiceId: number },
  options: () => O,
): Promise<LoadedInvoiceDocument<O>> {
  const invoice = await deps.invoices.findDetail(at.directory, at.invoiceId);
  if (!invoice) throw new InvoiceNotFoundError();
  const chosen = options();
  const client = await deps.clients.findByDirectory(at.directory);
  // The invoice exists, so its directory must: a missing client is a data fault, not a 404.
  if (!client) throw new Error(`Client directory "${at.directory}" has no company details to print as seller.`);
  const seller = client.company;
  const document = buildInvoiceDocument(invoice, seller, chosen.lang, chosen.duplicate ?? false, deps.timeZone);
  return { invoice, seller, document, options: chosen, eInvoice: () => buildEInvoice(invoice, seller, document, deps.timeZone) };
}
