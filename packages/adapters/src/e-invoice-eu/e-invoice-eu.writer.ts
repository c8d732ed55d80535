import type { FormatFactoryService, InvoiceServiceOptions, Logger } from '@e-invoice-eu/core';
import type { EInvoice, EInvoiceFormat, EInvoiceWriterPort } from '@logi/domain';
import { toLibraryInvoice } from './e-invoice-eu.mapper.js';

/**
 * The library's version, pinned in package.json, this mapping's revision and
 * the revision of what pdf-a3.finisher.ts does to its Factur-X: a change to
 * any is a new ETag.
 */
const LIBRARY_VERSION = '2.3.4';
const MAPPING_REVISION = 2;
const FINISHER_REVISION = 1;

const FORMATS: Record<EInvoiceFormat, string> = { ubl: 'UBL', cii: 'CII' };
/** The Factur-X profile of the embedded XML: EN 16931 (also called Comfort). */
const FACTUR_X_FORMAT = 'Factur-X-EN16931';

/** The library logs through this; its warnings are not the client's business. */
const quiet: Logger = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * EN 16931 documents written by @e-invoice-eu/core (UBL 2.1, CII D16B, Factur-X from the printed PDF), through its
 * format services: its entry point compiles its schema on every call (docs/contribute/decisions/0024-e-invoice-library.md).
 */
export class EInvoiceEuWriter implements EInvoiceWriterPort {
  readonly version = `e-invoice-eu/${LIBRARY_VERSION}/${MAPPING_REVISION}/${FINISHER_REVISION}`;
  /** The library is loaded on the first document (about half a second of start-up a process that writes none should not pay). */
  private formats: Promise<FormatFactoryService> | null = null;
  /** pdf-lib and xmlbuilder2, likewise, on the first Factur-X. */
  private finisher: Promise<typeof import('./pdf-a3.finisher.js')> | null = null;

  async xml(invoice: EInvoice, format: EInvoiceFormat): Promise<string> {
    const output = await this.generate(invoice, format, FORMATS[format], {});
    return typeof output === 'string' ? output : Buffer.from(output).toString('utf8');
  }

  async facturX(pdf: Buffer, invoice: EInvoice): Promise<Buffer> {
    const output = await this.generate(invoice, 'cii', FACTUR_X_FORMAT, {
      pdf: { buffer: new Uint8Array(pdf), filename: `${invoice.number}.pdf`, mimetype: 'application/pdf' },
    });
    // The library's PDF/A metadata disagrees with itself; see pdf-a3.finisher.ts.
    const { finishPdfA3 } = await (this.finisher ??= import('./pdf-a3.finisher.js'));
    return finishPdfA3(Buffer.from(output));
  }

  private async generate(invoice: EInvoice, syntax: EInvoiceFormat, format: string, options: Partial<InvoiceServiceOptions>): Promise<string | Uint8Array> {
    const formats = await (this.formats ??= import('@e-invoice-eu/core').then((library) => new library.FormatFactoryService()));
    const service = formats.createFormatService(format, quiet);
    const data = toLibraryInvoice(invoice, syntax);
    service.fillInvoiceDefaults(data);
    return service.generate(data, { format: formats.normalizeFormat(format), lang: invoice.lang, noWarnings: true, ...options });
  }
}
