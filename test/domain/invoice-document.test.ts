import { describe, expect, it } from 'vitest';
import { buildInvoiceDocument, DOCUMENT_LANGUAGES, INVOICE_TRANSLATIONS, type CompanyDetails, type DocumentLanguage, type InvoiceDetail } from '@logi/domain';
import { sampleInvoice } from './fakes.js';

const seller: CompanyDetails = {
  name: 'Baltic Haulage Sp. z o.o.',
  address: 'ul. Portowa 4\n80-001 Gdańsk\n\nPoland',
  vat: 'PL5860000000',
  bankAccount: 'PL61 1090 1014 0000 0712 1981 2874',
  bankName: 'Santander Bank Polska',
};

/** Intl separates with non-breaking spaces; tests read more easily with plain ones. */
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

function invoice(overrides: Partial<InvoiceDetail> = {}): InvoiceDetail {
  return sampleInvoice({
    currency: 'EUR',
    // 2025-11-19 10:00 UTC
    issueDate: 1763546400,
    amountNet: 10000,
    amountTax: 2345.67,
    amountGross: 12345.67,
    paid: 1000,
    leftToPay: 11345.67,
    items: [
      { name: 'Road freight', quantity: 1.5, unit: 'pcs', unitPriceNet: 1000, taxRate: '23', amountNet: 1500, amountTax: 345, amountGross: 1845 },
      { name: 'Customs', quantity: 1, unit: 'pcs', unitPriceNet: 10, taxRate: 'zw', amountNet: 10, amountTax: 0, amountGross: 10 },
      { name: 'Export leg', quantity: 1, unit: 'pcs', unitPriceNet: 0.1, taxRate: 'np', amountNet: 0.1, amountTax: 0, amountGross: 0.1 },
      { name: 'Tolls', quantity: 2, unit: 'pcs', unitPriceNet: 0.1, taxRate: '23', amountNet: 0.2, amountTax: 0.05, amountGross: 0.25 },
    ],
    ...overrides,
  });
}

const build = (lang: DocumentLanguage, overrides: Partial<InvoiceDetail> = {}, duplicate = false, zone = 'UTC') =>
  buildInvoiceDocument(invoice(overrides), seller, lang, duplicate, zone);

const expected: Record<DocumentLanguage, {
  title: string; correcting: string; purchase: string; seller: string; buyer: string; vatId: string;
  issueDate: string; gross: string; cell: string; rate: string; np: string; zw: string; duplicate: string; country: string; status: string;
}> = {
  cs: { title: 'Faktura – daňový doklad', correcting: 'Opravný daňový doklad', purchase: 'Přijatá faktura', seller: 'Dodavatel', buyer: 'Odběratel', vatId: 'DIČ', issueDate: '19. 11. 2025', gross: '12 345,67 €', cell: '1 500,00', rate: '23 %', np: 'nepodléhá DPH', zw: 'osvobozeno', duplicate: 'DUPLIKÁT', country: 'Německo', status: 'Částečně uhrazena' },
  de: { title: 'Rechnung', correcting: 'Rechnungskorrektur', purchase: 'Eingangsrechnung', seller: 'Rechnungssteller', buyer: 'Rechnungsempfänger', vatId: 'USt-IdNr.', issueDate: '19.11.2025', gross: '12.345,67 €', cell: '1.500,00', rate: '23 %', np: 'nicht steuerbar', zw: 'steuerfrei', duplicate: 'DUPLIKAT', country: 'Deutschland', status: 'Teilweise bezahlt' },
  en: { title: 'Invoice', correcting: 'Correcting invoice', purchase: 'Purchase invoice', seller: 'Seller', buyer: 'Buyer', vatId: 'VAT ID', issueDate: '19/11/2025', gross: '€12,345.67', cell: '1,500.00', rate: '23%', np: 'not subject', zw: 'exempt', duplicate: 'DUPLICATE', country: 'Germany', status: 'Partially paid' },
  pl: { title: 'Faktura VAT', correcting: 'Faktura korygująca', purchase: 'Faktura zakupu', seller: 'Sprzedawca', buyer: 'Nabywca', vatId: 'NIP', issueDate: '19.11.2025', gross: '12 345,67 €', cell: '1 500,00', rate: '23%', np: 'np.', zw: 'zw.', duplicate: 'DUPLIKAT', country: 'Niemcy', status: 'Częściowo zapłacona' },
  ro: { title: 'Factură', correcting: 'Factură de corecție', purchase: 'Factură de achiziție', seller: 'Furnizor', buyer: 'Cumpărător', vatId: 'CIF/Cod TVA', issueDate: '19.11.2025', gross: '12.345,67 EUR', cell: '1.500,00', rate: '23 %', np: 'neimpozabil', zw: 'scutit', duplicate: 'DUPLICAT', country: 'Germania', status: 'Plătită parțial' },
  tr: { title: 'Fatura', correcting: 'Düzeltme faturası', purchase: 'Alış faturası', seller: 'Satıcı', buyer: 'Alıcı', vatId: 'Vergi No', issueDate: '19.11.2025', gross: '€12.345,67', cell: '1.500,00', rate: '%23', np: 'KDV kapsamı dışı', zw: 'KDV istisnası', duplicate: 'İKİNCİ NÜSHA', country: 'Almanya', status: 'Kısmen ödendi' },
};

describe('buildInvoiceDocument', () => {
  describe.each(DOCUMENT_LANGUAGES)('when the language is %s', (lang) => {
    const want = expected[lang];

    it('then the title, labels and status are in that language', () => {
      const doc = build(lang, { status: 'semipaid' });
      expect(doc.lang).toBe(lang);
      expect(doc.locale).toBe(INVOICE_TRANSLATIONS[lang].locale);
      expect(doc.title).toBe(want.title);
      expect(doc.labels.seller).toBe(want.seller);
      expect(doc.labels.buyer).toBe(want.buyer);
      expect(doc.labels.vatId).toBe(want.vatId);
      expect(doc.status).toBe(want.status);
      expect(doc.buyer.country).toBe(want.country);
      expect(Object.values(doc.labels).every((label) => label.trim().length > 0)).toBe(true);
    });

    it('then dates and amounts are written as that locale writes them, with the invoice currency', () => {
      const doc = build(lang);
      expect(doc.dates.issueDate).toBe(want.issueDate);
      expect(plain(doc.totals.gross)).toBe(want.gross);
      expect(plain(doc.items[0]!.amountNet)).toBe(want.cell);
      expect(doc.amountsIn).toContain('EUR');
    });

    it('then a percentage rate follows the locale and the np / zw codes are translated', () => {
      const doc = build(lang);
      expect(doc.items.map((item) => plain(item.taxRate))).toEqual([want.rate, want.zw, want.np, want.rate]);
    });

    it('then sales, correcting and purchase invoices have their own titles', () => {
      expect(build(lang, { type: 's' }).title).toBe(want.title);
      expect(build(lang, { type: 'c', correctOf: { id: 9000, nr: 'FV/10/2026/0099' } }).title).toBe(want.correcting);
      expect(build(lang, { type: 'p' }).title).toBe(want.purchase);
    });

    it('then a duplicate copy carries the mark and an original does not', () => {
      expect(build(lang, {}, true).duplicateMark).toBe(want.duplicate);
      expect(build(lang, {}, false).duplicateMark).toBeNull();
    });
  });

  it('when the invoice corrects another, then the document names the corrected invoice number in its language', () => {
    const correctOf = { id: 9000, nr: 'FV/10/2026/0099' };
    expect(build('pl', { type: 'c', correctOf }).correction).toEqual({ nr: 'FV/10/2026/0099', text: 'Korekta do faktury nr FV/10/2026/0099' });
    expect(build('de', { type: 'c', correctOf }).correction?.text).toBe('Korrektur zur Rechnung Nr. FV/10/2026/0099');
    expect(build('tr', { type: 'c', correctOf }).correction?.text).toBe('FV/10/2026/0099 numaralı faturanın düzeltmesi');
    expect(build('en', { type: 's', correctOf: null }).correction).toBeNull();
  });

  it('when the issue time is late evening UTC, then the printed day is the one of the configured time zone', () => {
    // 2025-11-30 23:30 UTC is already 1 December in Warsaw, still 30 November in New York.
    const overrides = { issueDate: 1764545400, paymentDate: 1764545400 };
    expect(build('pl', overrides, false, 'UTC').dates.issueDate).toBe('30.11.2025');
    expect(build('pl', overrides, false, 'Europe/Warsaw').dates.issueDate).toBe('01.12.2025');
    expect(build('pl', overrides, false, 'Europe/Warsaw').dates.paymentDate).toBe('01.12.2025');
    expect(build('en', overrides, false, 'America/New_York').dates.issueDate).toBe('30/11/2025');
  });

  it('when the invoice is unpaid, then there is no payment date', () => {
    expect(build('en', { paymentDate: null }).dates.paymentDate).toBeNull();
  });

  it('when amounts are totalled per tax rate, then cents add up exactly and rates keep their first order', () => {
    const summary = build('en').taxSummary;
    expect(summary).toEqual([
      { taxRate: '23%', net: '1,500.20', tax: '345.05', gross: '1,845.25' },
      { taxRate: 'exempt', net: '10.00', tax: '0.00', gross: '10.00' },
      { taxRate: 'not subject', net: '0.10', tax: '0.00', gross: '0.10' },
    ]);
  });

  it('when the currency is the zloty, then Polish writes zł and English writes PLN', () => {
    expect(plain(build('pl', { currency: 'PLN', amountGross: 1450 }).totals.gross)).toBe('1 450,00 zł');
    expect(plain(build('en', { currency: 'PLN', amountGross: 1450 }).totals.gross)).toBe('PLN 1,450.00');
  });

  it('when a correcting invoice lowers the amount, then the negative total is written with its sign', () => {
    expect(plain(build('de', { type: 'c', amountGross: -250.5 }).totals.gross)).toBe('-250,50 €');
    expect(plain(build('de', { amountTax: -0 }).totals.tax)).toBe('0,00 €');
  });

  it('when amounts are formatted, then their separators do not break across lines', () => {
    expect(build('cs').totals.gross).toMatch(/^12\u00a0345,67\u00a0€$/);
  });

  it('when it is a sales invoice, then the client company sells and its bank account is printed', () => {
    const doc = build('en');
    expect(doc.seller).toEqual({ name: seller.name, addressLines: ['ul. Portowa 4', '80-001 Gdańsk', 'Poland'], vat: seller.vat, country: null });
    expect(doc.buyer).toMatchObject({ name: 'Rheinfracht GmbH', addressLines: ['Hafenstrasse 9', '47119 Duisburg'], vat: 'DE811111111' });
    expect(doc.bank).toEqual({ account: seller.bankAccount, name: seller.bankName });
    expect(doc.number).toBe('FV/11/2026/0007');
    expect(doc.orders).toEqual([{ type: 'FTL', nr: 'BH/2026/0412', cmr: 'CMR 778120' }]);
    expect(plain(doc.totals.paid)).toBe('€1,000.00');
    expect(plain(doc.totals.leftToPay)).toBe('€11,345.67');
  });

  it('when it is a purchase invoice, then the counterparty is the seller and no bank account of the client is printed', () => {
    const doc = build('en', { type: 'p' });
    expect(doc.seller.name).toBe('Rheinfracht GmbH');
    expect(doc.buyer.name).toBe(seller.name);
    expect(doc.bank).toBeNull();
  });

  it('when the customer country code is unknown to Intl, then the code is printed', () => {
    expect(build('en', { customerCountry: 'xk' }).buyer.country).toBe('Kosovo');
    expect(build('en', { customerCountry: 'qq' }).buyer.country).toBe('QQ');
    expect(build('en', { customerCountry: '' }).buyer.country).toBeNull();
  });
});
