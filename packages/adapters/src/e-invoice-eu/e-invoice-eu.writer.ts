import type { FormatFactoryService, InvoiceServiceOptions, Logger } from '@e-invoice-eu/core';
import { buildFa3Xml, KSEF_MAX_BYTES, ValidationError, xmlSafeData, type EInvoice, type EInvoiceFormat, type EInvoiceWriterPort } from '@logi/domain';
import { toLibraryInvoice, type LibraryProfile } from './e-invoice-eu.mapper.js';

/**
 * The library's version, pinned in package.json, this mapping's revision and
 * the revision of what pdf-a3.finisher.ts does to its Factur-X: a change to
 * any is a new ETag.
 */
const LIBRARY_VERSION = '2.3.4';
const XRECHNUNG = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0';
const MAPPING_REVISION = 3;
const FINISHER_REVISION = 2;

/** Each format the library writes: its syntax and the customization (BT-24) and profile (BT-23) it declares. */
const FORMATS: Record<Exclude<EInvoiceFormat, 'ksef'>, { library: 'UBL' | 'CII'; profile: LibraryProfile }> = {
  ubl: { library: 'UBL', profile: { syntax: 'ubl', customizationId: 'urn:cen.eu:en16931:2017' } },
  cii: { library: 'CII', profile: { syntax: 'cii', customizationId: 'urn:cen.eu:en16931:2017' } },
  'xrechnung-ubl': { library: 'UBL', profile: { syntax: 'ubl', customizationId: XRECHNUNG } },
  'xrechnung-cii': { library: 'CII', profile: { syntax: 'cii', customizationId: XRECHNUNG } },
  peppol: {
    library: 'UBL',
    profile: {
      syntax: 'ubl',
      customizationId: 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
      profileId: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
    },
  },
  // BR-RO-030: VAT accounted in RON (BT-6, BT-111) when the invoice is in another currency.
  'cius-ro': {
    library: 'UBL',
    profile: { syntax: 'ubl', customizationId: 'urn:cen.eu:en16931:2017#compliant#urn:efactura.mfinante.ro:CIUS-RO:1.0.1', taxCurrency: 'RON' },
  },
};
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
    if (format === 'ksef') return ksefXml(invoice);
    const { library, profile } = FORMATS[format];
    const output = await this.generate(invoice, profile, library, {});
    return typeof output === 'string' ? output : Buffer.from(output).toString('utf8');
  }

  async facturX(pdf: Buffer, invoice: EInvoice): Promise<Buffer> {
    const output = await this.generate(invoice, FORMATS.cii.profile, FACTUR_X_FORMAT, {
      pdf: { buffer: new Uint8Array(pdf), filename: `${invoice.number}.pdf`, mimetype: 'application/pdf' },
    });
    // The library's PDF/A metadata disagrees with itself; see pdf-a3.finisher.ts.
    const { finishPdfA3 } = await (this.finisher ??= import('./pdf-a3.finisher.js'));
    return finishPdfA3(Buffer.from(output));
  }

  private async generate(invoice: EInvoice, profile: LibraryProfile, format: string, options: Partial<InvoiceServiceOptions>): Promise<string | Uint8Array> {
    const formats = await (this.formats ??= import('@e-invoice-eu/core').then((library) => new library.FormatFactoryService()));
    const service = formats.createFormatService(format, quiet);
    // Every text enters the library XML-safe: characters XML 1.0 forbids are dropped, in the XML and the Factur-X XMP alike.
    const data = xmlSafeData(toLibraryInvoice(invoice, profile));
    service.fillInvoiceDefaults(data);
    return service.generate(data, { format: formats.normalizeFormat(format), lang: invoice.lang, noWarnings: true, ...options });
  }
}

/** FA(3), written by the domain (its SHA-256 is printed as KOD I, so one writer for both); KSeF takes at most 1 MB. */
function ksefXml(invoice: EInvoice): string {
  const xml = buildFa3Xml(invoice);
  const bytes = Buffer.byteLength(xml, 'utf8');
  if (bytes > KSEF_MAX_BYTES)
    throw ValidationError.invalidData({
      format: [`format=ksef needs a document KSeF accepts: this one has ${bytes} bytes, over its limit of ${KSEF_MAX_BYTES}.`],
    });
  return xml;
}
