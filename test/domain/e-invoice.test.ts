import { describe, expect, it } from 'vitest';
import {
  buildEInvoice,
  buildInvoiceDocument,
  countryOf,
  DownloadEInvoiceUseCase,
  InvoiceNotFoundError,
  splitAddress,
  unitCodeOf,
  ValidationError,
  vatCategoryOf,
  type EInvoice,
  type EInvoiceFormat,
  type EInvoiceWriterPort,
  type InvoiceDetail,
} from '@logi/domain';
import { balticClient, FakeClients, FakeHasher, FakeInvoices, sampleInvoice } from './fakes.js';

const company = { ...balticClient.company, address: 'ul. Portowa 4\n80-001 Gdańsk\nPolska', bankAccount: 'PL61 1090 1014 0000 0712 1981 2874' };

function eInvoiceOf(invoice: InvoiceDetail, lang: 'en' | 'de' = 'en'): EInvoice {
  return buildEInvoice(invoice, company, buildInvoiceDocument(invoice, company, lang, false, 'UTC'), 'UTC');
}

const correction = sampleInvoice({
  id: 9002,
  nr: 'KOR/1',
  type: 'c',
  correctOf: { id: 9001, nr: 'FV/11/2026/0007' },
  amountNet: -100,
  amountTax: -23,
  amountGross: -123,
  leftToPay: -123,
  items: [{ name: 'Price reduction', quantity: 1, unit: 'pcs', unitPriceNet: -100, taxRate: '23', amountNet: -100, amountTax: -23, amountGross: -123 }],
});

describe('buildEInvoice', () => {
  it('when a sales invoice is built, then it is an invoice (380) from the client to the customer, paid to the client account', () => {
    const e = eInvoiceOf(sampleInvoice());
    expect(e.typeCode).toBe('380');
    expect(e.seller).toMatchObject({
      name: 'Baltic Haulage Sp. z o.o.',
      vatId: 'PL5860000000',
      country: 'PL',
      street: 'ul. Portowa 4',
      postalCode: '80-001',
      city: 'Gdańsk',
    });
    expect(e.buyer).toMatchObject({ name: 'Rheinfracht GmbH', country: 'DE', postalCode: '47119', city: 'Duisburg' });
    expect(e.payment).toEqual({ iban: 'PL61109010140000071219812874', accountName: 'Baltic Haulage Sp. z o.o.', bankName: 'Santander' });
    expect(e).toMatchObject({
      issueDate: '2025-11-19',
      dueDate: '2025-12-03',
      deliveryDate: '2025-11-18',
      buyerReference: 'BH/2026/0412',
      despatchReference: 'CMR 778120',
    });
    expect(e.precedingInvoice).toBeNull();
  });

  it('when a correction is built, then it is a credit note (381) with positive amounts that references the corrected invoice', () => {
    const e = eInvoiceOf(correction);
    expect(e.typeCode).toBe('381');
    expect(e.precedingInvoice).toBe('FV/11/2026/0007');
    expect(e.notes).toEqual(['Corrects invoice no. FV/11/2026/0007']);
    expect(e.lines[0]).toMatchObject({ quantity: 1, netPrice: 100, netAmount: 100, vatCategory: 'S', vatRate: 23 });
    expect(e.totals).toEqual({ lineNet: 100, taxExclusive: 100, tax: 23, taxInclusive: 123, paid: 0, payable: 123 });
  });

  it('when a purchase invoice is built, then the parties swap as on the PDF and no account of the client is given', () => {
    const e = eInvoiceOf(sampleInvoice({ type: 'p' }));
    expect(e.seller.name).toBe('Rheinfracht GmbH');
    expect(e.buyer.name).toBe('Baltic Haulage Sp. z o.o.');
    expect(e.payment).toBeNull();
  });

  it('when an invoice has several rates, then the VAT breakdown has one row per category and rate, with reasons for untaxed ones in the PDF language', () => {
    const item = (taxRate: string, net: number, tax: number) => ({
      name: `i${taxRate}`,
      quantity: 2,
      unit: 'h',
      unitPriceNet: net / 2,
      taxRate,
      amountNet: net,
      amountTax: tax,
      amountGross: net + tax,
    });
    const invoice = sampleInvoice({ items: [item('23', 100, 23), item('zw', 50, 0), item('np', 10, 0), item('23', 0.1, 0.02), item('0', 5, 0)], paid: 10 });
    const e = eInvoiceOf(invoice, 'de');
    expect(e.vatBreakdown).toEqual([
      { category: 'S', rate: 23, taxableAmount: 100.1, taxAmount: 23.02, exemptionReason: null },
      { category: 'E', rate: 0, taxableAmount: 50, taxAmount: 0, exemptionReason: expect.any(String) },
      { category: 'AE', rate: 0, taxableAmount: 10, taxAmount: 0, exemptionReason: expect.any(String) },
      // Zero rated: EN 16931 forbids a reason (BR-Z-10).
      { category: 'Z', rate: 0, taxableAmount: 5, taxAmount: 0, exemptionReason: null },
    ]);
    expect(e.lines.map((line) => line.unitCode)).toEqual(['HUR', 'HUR', 'HUR', 'HUR', 'HUR']);
    expect(e.totals).toEqual({ lineNet: 165.1, taxExclusive: 165.1, tax: 23.02, taxInclusive: 188.12, paid: 10, payable: 178.12 });
    expect(e.lang).toBe('de');
  });
});

describe('e-invoice defaults', () => {
  it('when an item names its unit code, category or the company its country, then those win over the defaults', () => {
    expect(unitCodeOf('pcs')).toBe('H87');
    expect(unitCodeOf('Stunden?')).toBe('C62');
    expect(unitCodeOf('pcs', 'KMT')).toBe('KMT');
    expect(vatCategoryOf('23')).toEqual({ category: 'S', rate: 23 });
    expect(vatCategoryOf('8,5')).toEqual({ category: 'S', rate: 8.5 });
    expect(vatCategoryOf('np', 'k')).toEqual({ category: 'K', rate: 0 });
    expect(vatCategoryOf('np', 'nonsense')).toEqual({ category: 'AE', rate: 0 });
    expect(countryOf(null, 'EL123')).toBe('GR');
    expect(countryOf('cz', 'PL1')).toBe('CZ');
    expect(countryOf(undefined, '123')).toBe('PL');
  });

  it('when addresses are printed in the ways of the demo countries, then street, post code and city are found', () => {
    expect(splitAddress(['12 Dock Road', 'Tilbury RM18 7EH', 'United Kingdom'])).toEqual({
      street: '12 Dock Road',
      additionalStreet: null,
      city: 'Tilbury',
      postalCode: 'RM18 7EH',
    });
    expect(splitAddress(['Na Příkopě 8', '110 00 Praha 1', 'Česká republika'])).toMatchObject({ city: 'Praha 1', postalCode: '110 00' });
    expect(splitAddress(['Waalhaven Z.z. 21', '3089 JH Rotterdam'])).toMatchObject({ city: 'Rotterdam', postalCode: '3089 JH' });
    expect(splitAddress(['Main St 1', 'Building B', 'Berlin'])).toEqual({
      street: 'Main St 1',
      additionalStreet: 'Building B',
      city: 'Berlin',
      postalCode: null,
    });
    expect(splitAddress(['Main St 1', 'Berlin'])).toMatchObject({ additionalStreet: null, city: 'Berlin' });
    expect(splitAddress([])).toEqual({ street: null, additionalStreet: null, city: null, postalCode: null });
  });
});

class FakeWriter implements EInvoiceWriterPort {
  readonly version = 'fake/1';
  written: EInvoiceFormat[] = [];
  async xml(invoice: EInvoice, format: EInvoiceFormat) {
    this.written.push(format);
    return `<${format} nr="${invoice.number}" total="${invoice.totals.payable}"/>`;
  }
  async facturX(pdf: Buffer) {
    return pdf;
  }
}

describe('DownloadEInvoiceUseCase', () => {
  const setup = () => {
    const writer = new FakeWriter();
    const useCase = new DownloadEInvoiceUseCase({
      invoices: new FakeInvoices([sampleInvoice(), { ...correction }]),
      clients: new FakeClients([balticClient]),
      writer,
      hasher: new FakeHasher(),
      timeZone: 'UTC',
    });
    const run = (invoiceId: number, query: Array<[string, string]> = [], clientHolds?: (version: string) => boolean) =>
      useCase.execute({ directory: 'baltic', invoiceId, query, clientHolds });
    return { writer, run };
  };

  it('when no format is asked, then UBL; cii gives CII under another version', async () => {
    const { run, writer } = setup();
    const ubl = await run(9001);
    const cii = await run(9001, [['format', 'cii']]);
    expect(writer.written).toEqual(['ubl', 'cii']);
    expect(ubl).toMatchObject({ kind: 'xml', format: 'ubl', invoiceNr: 'FV/11/2026/0007' });
    expect(cii.version).not.toBe(ubl.version);
    expect((await run(9001)).version).toBe(ubl.version);
  });

  it('when the format or language is unknown or sent twice, then a validation error naming the field', async () => {
    const { run } = setup();
    for (const query of [
      [['format', 'pdf']],
      [['format', 'UBL']],
      [['lang', 'xx']],
      [
        ['format', 'ubl'],
        ['format', 'cii'],
      ],
    ] as Array<Array<[string, string]>>) {
      const error = await run(9001, query).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect(Object.keys((error as ValidationError).errors)).toEqual([query[0]![0]]);
    }
  });

  it('when the invoice is missing, then not found even with an invalid query', async () => {
    const { run } = setup();
    await expect(run(424242, [['format', 'nope']])).rejects.toBeInstanceOf(InvoiceNotFoundError);
  });

  it('when the client holds the current version, then not-modified and nothing is written', async () => {
    const { run, writer } = setup();
    const first = await run(9002);
    const again = await run(9002, [], (version) => version === first.version);
    expect(again).toEqual({ kind: 'not-modified', invoiceNr: 'KOR/1', version: first.version, format: 'ubl' });
    expect(writer.written).toEqual(['ubl']);
  });
});
