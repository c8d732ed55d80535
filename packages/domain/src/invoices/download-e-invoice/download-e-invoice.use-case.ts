import type { ClientRepositoryPort } from '../../ports/client-repository.port.js';
import type { ContentHasherPort } from '../../ports/content-hasher.port.js';
import type { EInvoiceWriterPort } from '../../ports/e-invoice-writer.port.js';
import type { EInvoice } from '../e-invoice/e-invoice.js';
import type { InvoiceDetail } from '../invoice.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import { ValidationError } from '../../shared/common.errors.js';
import { NATIONAL_E_INVOICE_FORMATS, type EInvoiceFormat, type NationalEInvoiceFormat } from '../e-invoice/e-invoice.js';
import { eInvoiceVersionOf } from '../e-invoice/e-invoice-version.js';
import { missingForFormat, withNationalData } from '../e-invoice/national-e-invoice.js';
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
 * the current version gets `not-modified` without it being written. A
 * national format (XRechnung, Peppol, CIUS-RO, KSeF) adds its own data and
 * answers 422 on `format`, naming each thing the invoice lacks for it.
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
    const eInvoice =
      format === 'ksef'
        ? this.checked(format, loaded.ksefEInvoice())
        : isNational(format)
          ? this.nationalDocument(format, loaded.eInvoice(), invoice)
          : loaded.eInvoice();
    const version = eInvoiceVersionOf(eInvoice, format, this.deps.writer.version, this.deps.hasher);
    if (input.clientHolds?.(version)) return { kind: 'not-modified', invoiceNr: invoice.nr, version, format };
    const xml = await this.deps.writer.xml(eInvoice, format);
    return { kind: 'xml', invoiceNr: invoice.nr, version, format, xml };
  }

  private nationalDocument(format: NationalEInvoiceFormat, eInvoice: EInvoice, invoice: InvoiceDetail): EInvoice {
    return this.checked(format, withNationalData(eInvoice, invoice, this.deps.timeZone));
  }

  private checked(format: NationalEInvoiceFormat, national: EInvoice): EInvoice {
    const missing = missingForFormat(format, national);
    if (missing.length > 0) throw ValidationError.invalidData({ format: missing.map((what) => `format=${format} needs ${what}.`) });
    return national;
  }
}

function isNational(format: EInvoiceFormat): format is NationalEInvoiceFormat {
  return (NATIONAL_E_INVOICE_FORMATS as readonly string[]).includes(format);
}
