import { describe, expect, it } from 'vitest';
import {
  buildEInvoice,
  buildFa3Xml,
  buildInvoiceDocument,
  DownloadEInvoiceUseCase,
  fa3TaxOf,
  isKsefNumber,
  isPolishNip,
  ksefVerificationUrl,
  missingForFormat,
  nipOf,
  ValidationError,
  withNationalData,
  type CompanyDetails,
  type EInvoice,
  type EInvoiceFormat,
  type EInvoiceWriterPort,
  type InvoiceDetail,
} from '@logi/domain';
import { balticClient, FakeClients, FakeHasher, FakeInvoices, sampleInvoice } from './fakes.js';

const polish: CompanyDetails = {
  ...balticClient.company,
  vat: 'PL5860000002',
  address: 'ul. Portowa 4\n80-001 Gdańsk\nPolska',
  bankAccount: 'PL61 1090 1014 0000 0712 1981 2874',
  contact: { name: 'Marta Nowak', phone: '+48 58 320 14 00', email: 'faktury@example.com' },
};

function national(invoice: InvoiceDetail, company: CompanyDetails = polish): EInvoice {
  const document = buildInvoiceDocument(invoice, company, 'pl', false, 'UTC');
  return withNationalData(buildEInvoice(invoice, company, document, 'UTC'), invoice, 'UTC');
}

const domestic = sampleInvoice({
  customerName: 'Łódź Cargo S.A.',
  customerVat: 'PL7251234561',
  customerCountry: 'pl',
  customerAddress: 'ul. Włókiennicza 12\n90-001 Łódź',
  currency: 'PLN',
  items: [{ name: 'Freight', quantity: 2, unit: 'pcs', unitPriceNet: 500, taxRate: '23', amountNet: 1000, amountTax: 230, amountGross: 1230 }],
});

describe('the NIP and KOD I', () => {
  it('when a NIP is checked, then its check digit decides, as KSeF checks it', () => {
    expect(isPolishNip('5860000002')).toBe(true);
    expect(isPolishNip('5860000000')).toBe(false);
    expect(isPolishNip('5265877635')).toBe(true);
    expect(nipOf('PL 586-000-00-02')).toBe('5860000002');
    expect(nipOf('DE298765432')).toBeNull();
  });

  it("when a KSeF number is checked, then its CRC-8 decides (the Ministry's example passes, one digit off fails)", () => {
    expect(isKsefNumber('5265877635-20250826-0100001AF629-AF')).toBe(true);
    expect(isKsefNumber('5265877635-20250826-0100001AF628-AF')).toBe(false);
    expect(isKsefNumber('5265877635-20250826-0100001AF629')).toBe(false);
  });

  it("when the link is made, then it is the Ministry's: NIP, issue date DD-MM-YYYY, SHA-256 in Base64URL", () => {
    // The example of CIRFMF/ksef-docs kody-qr.md (its test system's address, ours is production).
    const hex = Buffer.from('UtQp9Gpc51y-u3xApZjIjgkpZ01js-J8KflSPW8WzIE', 'base64url').toString('hex');
    expect(ksefVerificationUrl('1111111111', '2026-02-01', hex)).toBe(
      'https://qr.ksef.mf.gov.pl/invoice/1111111111/01-02-2026/UtQp9Gpc51y-u3xApZjIjgkpZ01js-J8KflSPW8WzIE',
    );
  });

  it('when a rate is placed in FA(3), then 23 % is P_13_1, zw P_13_7, np II for an EU buyer, oo for a Polish one, a foreign rate OSS', () => {
    expect(fa3TaxOf('S', 23, 'PL')).toEqual({ slot: '1', rate: '23' });
    expect(fa3TaxOf('E', 0, 'PL')).toEqual({ slot: '7', rate: 'zw' });
    expect(fa3TaxOf('AE', 0, 'DE')).toEqual({ slot: '9', rate: 'np II' });
    expect(fa3TaxOf('AE', 0, 'TR')).toEqual({ slot: '8', rate: 'np I' });
    expect(fa3TaxOf('AE', 0, 'PL')).toEqual({ slot: '10', rate: 'oo' });
    expect(fa3TaxOf('S', 19, 'DE')).toEqual({ slot: '5', ossRate: 19 });
  });
});

describe('missingForFormat', () => {
  it('when a Polish invoice has everything KSeF needs, then nothing is missing', () => {
    expect(missingForFormat('ksef', national(domestic))).toEqual([]);
  });

  it("when the seller's NIP fails its checksum, or the seller is not Polish, then ksef names it", () => {
    expect(missingForFormat('ksef', national(domestic, { ...polish, vat: 'PL5860000000' }))).toEqual([
      "a seller NIP whose check digit is right (5860000000 fails KSeF's NIP checksum)",
    ]);
    expect(missingForFormat('ksef', national(domestic, { ...polish, vat: 'DE298765432', country: 'DE' }))[0]).toMatch(/^a Polish seller with a NIP/);
  });

  it('when a Polish invoice is in euros without a rate, then ksef asks for exchange_rate; with one, nothing is missing', () => {
    const euro = { ...domestic, currency: 'EUR' };
    expect(missingForFormat('ksef', national(euro))).toEqual(['exchange_rate (PLN for one EUR: FA(3) states the VAT in PLN)']);
    expect(missingForFormat('ksef', national({ ...euro, exchangeRate: 4.25 }))).toEqual([]);
  });

  it('when XRechnung is asked without a Leitweg-ID or a seller contact, then both are named', () => {
    const german = sampleInvoice();
    expect(missingForFormat('xrechnung-ubl', national(german, { ...polish, contact: undefined }))).toEqual([
      "buyer_reference (the buyer's Leitweg-ID, BT-10)",
      "the seller's contact person (company.contact: name, phone, e-mail)",
    ]);
    expect(missingForFormat('xrechnung-cii', national({ ...german, buyerReference: '04011000-12345-03' }))).toEqual([]);
  });

  it('when CIUS-RO is asked, then it needs a Romanian party, its county and VAT in RON', () => {
    expect(missingForFormat('cius-ro', national(domestic))).toEqual(['a Romanian seller or buyer (RO e-Factura is for invoices with a party in Romania)']);
    const romanian = sampleInvoice({ customerVat: 'RO18547290', customerCountry: 'ro', customerAddress: 'Str. Lungă 44\n500035 Brașov', currency: 'RON' });
    expect(missingForFormat('cius-ro', national(romanian))).toEqual(["customer_county: the Romanian buyer's county (ISO 3166-2:RO, BR-RO-110)"]);
    expect(missingForFormat('cius-ro', national({ ...romanian, customerCounty: 'RO-BV' }))).toEqual([]);
    expect(missingForFormat('cius-ro', national({ ...romanian, customerCounty: 'RO-BV', currency: 'EUR', exchangeRate: 4.25 }))[0]).toMatch(
      /^exchange_rate in RON for EUR/,
    );
    expect(missingForFormat('cius-ro', national({ ...romanian, customerCounty: 'RO-B' }))).toEqual([
      "the Bucharest buyer's sector as its city, SECTOR1 to SECTOR6 (BR-RO-100)",
    ]);
  });
});

describe('buildFa3Xml', () => {
  it('when a euro correction of an invoice in KSeF is written, then KOR with the corrected KSeF number, amounts as printed and VAT in PLN', () => {
    const correction = national({
      ...domestic,
      nr: 'KOR/1',
      type: 'c',
      currency: 'EUR',
      exchangeRate: 4.2456,
      correctOf: { id: 9000, nr: 'FV/1' },
      correctedInvoice: { issueDate: 1763424000, ksefNumber: '5860000002-20251118-010000000001-F3' },
      items: [
        { name: 'Price <reduction> & co', quantity: 1, unit: 'pcs', unitPriceNet: -100, taxRate: '23', amountNet: -100, amountTax: -23, amountGross: -123 },
      ],
    });
    const xml = buildFa3Xml(correction);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<Faktura xmlns="http://crd.gov.pl/wzor/2025/06/25/13775/"')).toBe(true);
    expect(xml).toContain('<P_13_1>-100.00</P_13_1>');
    expect(xml).toContain('<P_14_1>-23.00</P_14_1>');
    expect(xml).toContain('<P_14_1W>-97.65</P_14_1W>');
    expect(xml).toContain('<P_15>-123.00</P_15>');
    expect(xml).toContain('<RodzajFaktury>KOR</RodzajFaktury>');
    expect(xml).toMatch(
      /<DataWystFaKorygowanej>2025-11-18<\/DataWystFaKorygowanej>\s*<NrFaKorygowanej>FV\/1<\/NrFaKorygowanej>\s*<NrKSeF>1<\/NrKSeF>\s*<NrKSeFFaKorygowanej>5860000002-20251118-010000000001-F3</,
    );
    expect(xml).toMatch(/<P_8B>1<\/P_8B>\s*<P_9A>-100<\/P_9A>\s*<P_11>-100.00<\/P_11>\s*<P_12>23<\/P_12>\s*<KursWaluty>4.2456<\/KursWaluty>/);
    expect(xml).toContain('<P_7>Price &lt;reduction&gt; &amp; co</P_7>');
    expect(buildFa3Xml(correction)).toBe(xml);
  });

  it('when the corrected invoice has no KSeF number, then NrKSeFN says it was issued outside KSeF', () => {
    const xml = buildFa3Xml(
      national({ ...domestic, type: 'c', correctOf: { id: 9000, nr: 'FV/1' }, correctedInvoice: { issueDate: 1763424000, ksefNumber: null } }),
    );
    expect(xml).toMatch(/<NrFaKorygowanej>FV\/1<\/NrFaKorygowanej>\s*<NrKSeFN>1<\/NrKSeFN>/);
  });
});

class FakeWriter implements EInvoiceWriterPort {
  readonly version = 'fake/1';
  readonly written: Array<{ format: EInvoiceFormat; invoice: EInvoice }> = [];
  async xml(invoice: EInvoice, format: EInvoiceFormat) {
    this.written.push({ format, invoice });
    return `<${format}/>`;
  }
  async facturX(pdf: Buffer) {
    return pdf;
  }
}

describe('DownloadEInvoiceUseCase with a national format', () => {
  const setup = (company: CompanyDetails) => {
    const writer = new FakeWriter();
    const useCase = new DownloadEInvoiceUseCase({
      invoices: new FakeInvoices([{ ...domestic, directory: 'baltic' }]),
      clients: new FakeClients([{ ...balticClient, company }]),
      writer,
      hasher: new FakeHasher(),
      timeZone: 'UTC',
    });
    return { writer, run: (query: Array<[string, string]>) => useCase.execute({ directory: 'baltic', invoiceId: 9001, query }) };
  };

  it('when the invoice lacks what the format needs, then a validation error on format names each missing item, and nothing is written', async () => {
    const { run, writer } = setup({ ...polish, vat: 'PL5860000000', contact: undefined });
    const error = (await run([['format', 'ksef']]).catch((caught: unknown) => caught)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.errors).toEqual({ format: ["format=ksef needs a seller NIP whose check digit is right (5860000000 fails KSeF's NIP checksum)."] });
    const xrechnung = (await run([['format', 'xrechnung-ubl']]).catch((caught: unknown) => caught)) as ValidationError;
    expect(xrechnung.errors.format).toEqual([
      "format=xrechnung-ubl needs buyer_reference (the buyer's Leitweg-ID, BT-10).",
      "format=xrechnung-ubl needs the seller's contact person (company.contact: name, phone, e-mail).",
    ]);
    expect(writer.written).toEqual([]);
  });

  it('when ksef is asked in any language, then the writer gets the same Polish document with its national data', async () => {
    const { run, writer } = setup(polish);
    const en = await run([
      ['format', 'ksef'],
      ['lang', 'en'],
    ]);
    const pl = await run([
      ['format', 'ksef'],
      ['lang', 'pl'],
    ]);
    expect(en.version).toBe(pl.version);
    expect(writer.written[0]!.invoice).toEqual(writer.written[1]!.invoice);
    expect(writer.written[0]!.invoice.lang).toBe('pl');
    expect(writer.written[0]!.invoice.national).toMatchObject({ nationalCurrency: 'PLN', ksefNumber: null, createdAt: '2025-11-19T00:26:40Z' });
  });
});
