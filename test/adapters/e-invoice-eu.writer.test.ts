import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { InvoiceService } from '@e-invoice-eu/core';
import { PDFArray, PDFDict, PDFDocument, PDFHeader, PDFHexString, PDFName, PDFString, StandardFonts } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EInvoiceEuWriter, toLibraryInvoice } from '@logi/adapters';
import { ValidationError, type EInvoice } from '@logi/domain';
import { KSEF_CATALOG, XSD, xsdErrors } from '../support/xml-validation.js';
import { generatedNames, NAMES, XML_1_0_FORBIDDEN, xmlSafe } from '../support/names-in-every-script.js';
import { iccComponents, iccProblems, infoXmpDisagreements, parseXmp, pdfAFacts, xmpText, xmpValues, XMP_TWIN } from '../support/pdfa-facts.js';

const run = promisify(execFile);

const invoice: EInvoice = {
  lang: 'en',
  number: 'FV/1',
  typeCode: '380',
  issueDate: '2026-11-18',
  dueDate: '2026-12-02',
  deliveryDate: '2026-11-17',
  currency: 'EUR',
  notes: [],
  buyerReference: 'BH/1, BH/2',
  despatchReference: 'CMR 1, CMR 2',
  precedingInvoice: null,
  seller: { name: 'Seller', vatId: 'PL5860000000', country: 'PL', street: 'ul. Portowa 4', additionalStreet: null, city: 'Gdańsk', postalCode: '80-001' },
  buyer: { name: 'Buyer & Co <GmbH>', vatId: 'DE811111111', country: 'DE', street: null, additionalStreet: null, city: 'Duisburg', postalCode: null },
  payment: { iban: 'PL61109010140000071219812874', accountName: 'Seller', bankName: 'Bank' },
  paymentTerms: 'Due date: 02/12/2026',
  lines: [
    { id: '1', name: 'Freight', quantity: 1, unitCode: 'H87', netPrice: 100, netAmount: 100, vatCategory: 'S', vatRate: 23 },
    { id: '2', name: 'Insurance', quantity: 2.5, unitCode: 'HUR', netPrice: 10, netAmount: 25, vatCategory: 'E', vatRate: 0 },
  ],
  vatBreakdown: [
    { category: 'S', rate: 23, taxableAmount: 100, taxAmount: 23, exemptionReason: null },
    { category: 'E', rate: 0, taxableAmount: 25, taxAmount: 0, exemptionReason: 'exempt' },
  ],
  totals: { lineNet: 125, taxExclusive: 125, tax: 23, taxInclusive: 148, paid: 48, payable: 100 },
};

/** What format=ksef needs beyond the invoice above: a Polish seller (a valid NIP) and the national data. */
const KSEF_READY: Pick<EInvoice, 'seller' | 'national'> = {
  seller: { ...invoice.seller, vatId: 'PL5860000002' },
  national: {
    givenBuyerReference: null,
    nationalCurrency: 'PLN',
    exchangeRate: 4.25,
    ksefNumber: null,
    corrected: null,
    createdAt: '2026-11-18T08:00:00Z',
  },
};

describe('EInvoiceEuWriter', () => {
  const writer = new EInvoiceEuWriter();

  it('when it writes UBL and CII, then the bytes equal what the library writes after validating the data against its schema', async () => {
    const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
    for (const [format, name] of [
      ['ubl', 'UBL'],
      ['cii', 'CII'],
    ] as const) {
      const validated = await new InvoiceService(quiet).generate(toLibraryInvoice(invoice, 'ubl'), { format: name, lang: 'en', noWarnings: true });
      expect(await writer.xml(invoice, format)).toBe(validated);
    }
  });

  it('when a text holds XML characters, then they are escaped', async () => {
    expect(await writer.xml(invoice, 'ubl')).toContain('Buyer &amp; Co &lt;GmbH&gt;');
  });

  it('when the same document is written twice, then the same text', async () => {
    expect(await writer.xml({ ...invoice }, 'cii')).toBe(await writer.xml(invoice, 'cii'));
  });
});

/** A page as Chromium prints it: PDF 1.4, a classic cross-reference table, Chromium's Title, Creator, Producer and dates. */
async function printedPdf(): Promise<Buffer> {
  const pdf = await PDFDocument.create({ updateMetadata: false });
  pdf.context.header = PDFHeader.forVersion(1, 4);
  pdf.addPage().drawText('FV/1', { font: await pdf.embedFont(StandardFonts.Helvetica) });
  pdf.setTitle('Faktura FV/1');
  pdf.setCreator('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36');
  pdf.setProducer('Skia/PDF m156');
  pdf.setCreationDate(new Date('2026-11-18T10:00:00Z'));
  pdf.setModificationDate(new Date('2026-11-18T10:00:00Z'));
  return Buffer.from(await pdf.save({ useObjectStreams: false }));
}

describe('EInvoiceEuWriter: Factur-X as a PDF/A-3 validator reads it', () => {
  const writer = new EInvoiceEuWriter();
  /** A seller whose name is outside Latin-1 and holds XML's special characters. */
  const polish: EInvoice = { ...invoice, seller: { ...invoice.seller, name: 'Bałtyk Spółka <Z&O> – Łódź' } };
  let printed: Buffer;
  let dir: string;
  beforeAll(async () => {
    printed = await printedPdf();
    dir = await mkdtemp(path.join(os.tmpdir(), 'logi-facturx-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('when a PDF 1.4 is made Factur-X, then the header says %PDF-1.7 with a binary comment, as the XMP says (6.1.2)', async () => {
    const facts = await pdfAFacts(await writer.facturX(printed, invoice));
    expect(facts.headerVersion).toBe('1.7');
    expect([...facts.binaryComment!].filter((byte) => byte > 127).length).toBeGreaterThanOrEqual(4);
    expect(facts.catalogVersion).toBeNull();
    expect(xmpValues(await parseXmp(xmpText(facts)), 'pdf:PDFVersion')).toEqual(['1.7']);
  });

  it('when Factur-X is made, then every Info entry has its XMP twin with the same value, and no twin is without its entry (6.6.2.3.1)', async () => {
    for (const document of [invoice, polish]) {
      const facts = await pdfAFacts(await writer.facturX(printed, document));
      const xmp = await parseXmp(xmpText(facts));
      expect(Object.keys(facts.info).sort()).toEqual(Object.keys(XMP_TWIN).sort());
      expect(infoXmpDisagreements(facts, xmp), document.seller.name).toEqual([]);
    }
  });

  it("when the seller's name is outside Latin-1, then the XMP is UTF-8 and names the seller as the Info does", async () => {
    const facts = await pdfAFacts(await writer.facturX(printed, polish));
    expect(() => xmpText(facts)).not.toThrow();
    const xmp = await parseXmp(xmpText(facts));
    expect(facts.info.Author).toBe(polish.seller.name);
    expect(xmp.values(XMP_TWIN.Author.xpath)).toEqual([polish.seller.name]);
    expect(xmp.values(XMP_TWIN.Subject.xpath)).toEqual([facts.info.Subject]);
    expect(facts.info.Subject).toContain(polish.seller.name);
  });

  it('when the process runs in another time zone, then the XMP dates are the Info dates: the same instant in the same zone', async () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      expect(new Date('2026-11-18T12:00:00Z').getTimezoneOffset()).toBe(300);
      const facts = await pdfAFacts(await writer.facturX(printed, invoice));
      const xmp = await parseXmp(xmpText(facts));
      expect(infoXmpDisagreements(facts, xmp).filter((problem) => /Date/.test(problem))).toEqual([]);
      expect(xmpValues(xmp, 'xmp:MetadataDate')).toEqual(xmpValues(xmp, 'xmp:ModifyDate'));
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('when Factur-X is made, then its one output intent is GTS_PDFA1 with a sound sRGB profile whose stream says /N 3 (6.2.3)', async () => {
    const facts = await pdfAFacts(await writer.facturX(printed, invoice));
    expect(facts.outputProfiles).toHaveLength(1);
    const [profile] = facts.outputProfiles;
    expect(profile!.subtype).toBe('/GTS_PDFA1');
    expect(iccProblems(profile!.icc)).toEqual([]);
    expect(iccComponents(profile!.icc)).toBe(3);
    expect(profile!.n).toBe(iccComponents(profile!.icc));
  });

  it('when Factur-X is made, then the PDF/A-3B identification, the Factur-X extension schema and factur-x.xml stay, and poppler reads them', async () => {
    const bytes = await writer.facturX(printed, polish);
    const facts = await pdfAFacts(bytes);
    expect(facts.metadata).toMatchObject({ type: '/Metadata', subtype: '/XML', hasFilter: false });
    expect(facts.trailerId).toHaveLength(2);
    const xmp = await parseXmp(xmpText(facts));
    expect([xmpValues(xmp, 'pdfaid:part'), xmpValues(xmp, 'pdfaid:conformance')]).toEqual([['3'], ['B']]);
    expect(xmp.values('//pdfaExtension:schemas/rdf:Bag/rdf:li[pdfaSchema:prefix = "fx"]/pdfaSchema:namespaceURI ! string()')).toEqual([
      'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#',
    ]);
    expect(xmp.values('//pdfaSchema:property/rdf:Seq/rdf:li/pdfaProperty:name ! string()')).toEqual([
      'DocumentFileName',
      'DocumentType',
      'Version',
      'ConformanceLevel',
    ]);
    expect(['fx:DocumentType', 'fx:DocumentFileName', 'fx:Version', 'fx:ConformanceLevel'].map((name) => xmpValues(xmp, name))).toEqual([
      ['INVOICE'],
      ['factur-x.xml'],
      ['1.0'],
      ['EN 16931'],
    ]);

    const pdf = await PDFDocument.load(bytes, { updateMetadata: false });
    const af = pdf.catalog.lookup(PDFName.of('AF'), PDFArray);
    const specs = Array.from({ length: af.size() }, (_unused, index) => af.lookup(index, PDFDict));
    const relationships = specs.map((spec) => {
      const name = spec.lookup(PDFName.of('UF'));
      return [name instanceof PDFString || name instanceof PDFHexString ? name.decodeText() : null, spec.get(PDFName.of('AFRelationship'))?.toString()];
    });
    expect(relationships).toEqual([['factur-x.xml', '/Alternative']]);

    const file = path.join(dir, 'facturx.pdf');
    await writeFile(file, bytes);
    // pdfinfo -meta prints the packet and a line break.
    expect((await run('pdfinfo', ['-meta', file])).stdout).toBe(`${xmpText(facts)}\n`);
    expect((await run('pdfdetach', ['-list', file])).stdout).toBe('1 embedded files\n1: factur-x.xml\n');
  });

  describe('format=ksef', () => {
    const polish: EInvoice = { ...invoice, ...KSEF_READY };

    it('when FA(3) is written, then UTF-8 text without a BOM, the same every time', async () => {
      const xml = await writer.xml(polish, 'ksef');
      expect(xml.charCodeAt(0)).not.toBe(0xfeff);
      expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<Faktura ')).toBe(true);
      expect(await writer.xml(polish, 'ksef')).toBe(xml);
    });

    it("when the FA(3) would be over KSeF's 1 MB, then a validation error on format says so instead of a document KSeF refuses", async () => {
      const line = invoice.lines[0]!;
      const lines = Array.from({ length: 4000 }, (_unused, index) => ({ ...line, id: String(index + 1), name: `Freight ${'x'.repeat(200)} ${index}` }));
      const error = await writer.xml({ ...polish, lines }, 'ksef').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).errors.format![0]).toMatch(
        /^format=ksef needs a document KSeF accepts: this one has \d+ bytes, over its limit of 1000000\.$/,
      );
    });
  });
});

describe('EInvoiceEuWriter: every name prints in every format', () => {
  const writer = new EInvoiceEuWriter();
  let dir: string;
  let printed: Buffer;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'logi-names-'));
    printed = await printedPdf();
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const generated = generatedNames(4, 35);
  const { seller: polishSeller, national } = KSEF_READY;

  it.each([...NAMES, ...generated].map((name) => [JSON.stringify(name), name]))(
    'when the seller and the buyer are named %s, then UBL, CII, XRechnung (UBL and CII), Peppol, CIUS-RO and FA(3) validate against the XSD of their syntax and carry the names without what XML forbids, and Factur-X names the seller',
    async (_label, name) => {
      const safe = xmlSafe(name);
      expect(XML_1_0_FORBIDDEN.test(safe)).toBe(false);
      const named: EInvoice = { ...invoice, seller: { ...polishSeller, name }, buyer: { ...invoice.buyer, name: `${name} GmbH` }, national };
      const documents = [
        { format: 'ubl', schema: XSD.ublInvoice, seller: 'cac:AccountingSupplierParty//cac:PartyLegalEntity/cbc:RegistrationName', catalog: undefined },
        { format: 'cii', schema: XSD.cii, seller: 'ram:SellerTradeParty/ram:Name', catalog: undefined },
        { format: 'ksef', schema: XSD.ksefFa3, seller: 'Podmiot1/DaneIdentyfikacyjne/Nazwa', catalog: KSEF_CATALOG },
        {
          format: 'xrechnung-ubl',
          schema: XSD.ublInvoice,
          seller: 'cac:AccountingSupplierParty//cac:PartyLegalEntity/cbc:RegistrationName',
          catalog: undefined,
        },
        { format: 'xrechnung-cii', schema: XSD.cii, seller: 'ram:SellerTradeParty/ram:Name', catalog: undefined },
        { format: 'peppol', schema: XSD.ublInvoice, seller: 'cac:AccountingSupplierParty//cac:PartyLegalEntity/cbc:RegistrationName', catalog: undefined },
        { format: 'cius-ro', schema: XSD.ublInvoice, seller: 'cac:AccountingSupplierParty//cac:PartyLegalEntity/cbc:RegistrationName', catalog: undefined },
      ] as const;
      for (const document of documents) {
        const file = path.join(dir, `${document.format}.xml`);
        await writeFile(file, await writer.xml(named, document.format), 'utf8');
        expect(await xsdErrors(document.schema, [file], document.catalog), document.format).toEqual([]);
        const last = document.seller.split('/').at(-1)!.replace(/^\w+:/, '');
        const xpath = `string((//*[local-name()='${document.seller.split('/')[0]!.replace(/^\w+:/, '')}']//*[local-name()='${last}'])[1])`;
        const { stdout } = await run('xmllint', ['--nonet', '--xpath', xpath, file]);
        // xmllint ends what it prints with a line break.
        expect(stdout.slice(0, -1), document.format).toBe(safe);
      }
      const facts = await pdfAFacts(await writer.facturX(printed, named));
      const xmp = await parseXmp(xmpText(facts));
      expect(facts.info.Author).toBe(safe);
      expect(xmp.values(XMP_TWIN.Author.xpath)).toEqual([safe]);
      expect(infoXmpDisagreements(facts, xmp)).toEqual([]);
    },
  );
});
