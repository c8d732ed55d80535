import type { CompanyDetails } from '../../clients/client.js';
import type { ClientRepositoryPort } from '../../ports/client-repository.port.js';
import type { ContentHasherPort } from '../../ports/content-hasher.port.js';
import { missingForFormat, withNationalData } from '../e-invoice/national-e-invoice.js';
import { buildFa3Xml } from '../ksef/fa3-document.js';
import { ksefVerificationUrl, nipOf } from '../ksef/ksef-rules.js';
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
  /**
   * The document KSeF's FA(3) is written from, with its national data: always from the Polish document, whatever
   * `lang`, since it is one Polish tax document and its SHA-256 is what the printed QR code (KOD I) verifies.
   */
  readonly ksefEInvoice: () => EInvoice;
}

/**
 * The step the PDF download, its render job and the e-invoice share, so the three print the same
 * document: the invoice (InvoiceNotFoundError when missing), then the options (a function, so a
 * missing invoice beats an invalid query), then the directory's company as seller (read beside the invoice), then
 * the document.
 */
export async function loadInvoiceDocument<O extends { lang: DocumentLanguage; duplicate?: boolean }>(
  deps: { invoices: InvoiceRepositoryPort; clients: ClientRepositoryPort; hasher: ContentHasherPort; timeZone: string },
  at: { directory: string; invoiceId: number },
  options: () => O,
): Promise<LoadedInvoiceDocument<O>> {
  // The seller is read beside the invoice (one round trip less on every PDF, in the API and again in its job); it is
  // only looked at once the invoice is found, so the order of the answers above stays.
  const sellerRead = deps.clients.findByDirectory(at.directory);
  void sellerRead.catch(() => undefined);
  const invoice = await deps.invoices.findDetail(at.directory, at.invoiceId);
  if (!invoice) throw new InvoiceNotFoundError();
  const chosen = options();
  const client = await sellerRead;
  // The invoice exists, so its directory must: a missing client is a data fault, not a 404.
  if (!client) throw new Error(`Client directory "${at.directory}" has no company details to print as seller.`);
  const seller = client.company;
  const printed = buildInvoiceDocument(invoice, seller, chosen.lang, chosen.duplicate ?? false, deps.timeZone);
  const ksefEInvoice = () => {
    const polish = chosen.lang === 'pl' && !chosen.duplicate ? printed : buildInvoiceDocument(invoice, seller, 'pl', false, deps.timeZone);
    return withNationalData(buildEInvoice(invoice, seller, polish, deps.timeZone), invoice, deps.timeZone);
  };
  const document = invoice.ksefNumber ? { ...printed, ksef: ksefPart(invoice.ksefNumber, ksefEInvoice(), deps.hasher) } : printed;
  return { invoice, seller, document, options: chosen, eInvoice: () => buildEInvoice(invoice, seller, document, deps.timeZone), ksefEInvoice };
}

/** The KSeF number and KOD I: the seller's NIP, the issue date and the SHA-256 of the very FA(3) `format=ksef` answers. */
function ksefPart(number: string, eInvoice: EInvoice, hasher: ContentHasherPort): InvoiceDocument['ksef'] {
  if (missingForFormat('ksef', eInvoice).length > 0) return { number, verificationUrl: null };
  const xml = buildFa3Xml(eInvoice);
  return { number, verificationUrl: ksefVerificationUrl(nipOf(eInvoice.seller.vatId!)!, eInvoice.issueDate, hasher.sha256Hex(xml)) };
}
