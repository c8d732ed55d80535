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

/** A Romanian buyer whose address, as its own system wrote it, ends in the country's own name. */
const romanianBuyer: Partial<InvoiceDetail> = {
  customerName: 'Transporturi Științifice Brașov S.R.L.',
  customerVat: 'RO18547290',
  customerCountry: 'ro',
  customerAddress: 'Str. Lungă 44\n500035 Brașov\nRomânia',
};

const build = (lang: DocumentLanguage, overrides: Partial<InvoiceDetail> = {}, duplicate = false, zone = 'UTC') =>
  buildInvoiceDocument(invoice(overrides), seller, lang, duplicate, zone);

const expected: Record<
  DocumentLanguage,
  {
    title: string;
    correcting: string;
    purchase: string;
    seller: string;
    buyer: string;
    issueDate: string;
    gross: string;
    cell: string;
    rate: string;
    np: string;
    zw: string;
    duplicate: string;
    country: string;
    status: string;
    sellerCountry: string;
    romania: string;
    pieces: string;
    hours: string;
    /** The label of a VAT id of Poland, Romania, Germany, Turkey (10 digits, no prefix) and the UK. */
    vatIds: { PL: string; RO: string; DE: string; TR: string; GB: string };
  }
> = {
  cs: {
    title: 'Faktura – daňový doklad',
    correcting: 'Opravný daňový doklad',
    purchase: 'Přijatá faktura',
    seller: 'Dodavatel',
    buyer: 'Odběratel',
    issueDate: '19. 11. 2025',
    gross: '12 345,67 €',
    cell: '1 500,00',
    rate: '23 %',
    np: 'nepodléhá DPH',
    zw: 'osvobozeno',
    duplicate: 'DUPLIKÁT',
    country: 'Německo',
    status: 'Částečně uhrazena',
    sellerCountry: 'Polsko',
    romania: 'Rumunsko',
    pieces: 'ks',
    hours: 'hod.',
    vatIds: { PL: 'DIČ', RO: 'DIČ', DE: 'DIČ', TR: 'DIČ', GB: 'DIČ' },
  },
  de: {
    title: 'Rechnung',
    correcting: 'Rechnungskorrektur',
    purchase: 'Eingangsrechnung',
    seller: 'Rechnungssteller',
    buyer: 'Rechnungsempfänger',
    issueDate: '19.11.2025',
    gross: '12.345,67 €',
    cell: '1.500,00',
    rate: '23 %',
    np: 'nicht steuerbar',
    zw: 'steuerfrei',
    duplicate: 'DUPLIKAT',
    country: 'Deutschland',
    status: 'Teilweise bezahlt',
    sellerCountry: 'Polen',
    romania: 'Rumänien',
    pieces: 'Stk.',
    hours: 'Std.',
    vatIds: { PL: 'USt-IdNr.', RO: 'USt-IdNr.', DE: 'USt-IdNr.', TR: 'USt-IdNr.', GB: 'USt-IdNr.' },
  },
  en: {
    title: 'Invoice',
    correcting: 'Correcting invoice',
    purchase: 'Purchase invoice',
    seller: 'Seller',
    buyer: 'Buyer',
    issueDate: '19/11/2025',
    gross: '€12,345.67',
    cell: '1,500.00',
    rate: '23%',
    np: 'not subject',
    zw: 'exempt',
    duplicate: 'DUPLICATE',
    country: 'Germany',
    status: 'Partially paid',
    sellerCountry: 'Poland',
    romania: 'Romania',
    pieces: 'pcs',
    hours: 'h',
    vatIds: { PL: 'VAT ID', RO: 'VAT ID', DE: 'VAT ID', TR: 'VAT ID', GB: 'VAT ID' },
  },
  pl: {
    title: 'Faktura VAT',
    correcting: 'Faktura korygująca',
    purchase: 'Faktura zakupu',
    seller: 'Sprzedawca',
    buyer: 'Nabywca',
    issueDate: '19.11.2025',
    gross: '12 345,67 €',
    cell: '1 500,00',
    rate: '23%',
    np: 'np.',
    zw: 'zw.',
    duplicate: 'DUPLIKAT',
    country: 'Niemcy',
    status: 'Częściowo zapłacona',
    sellerCountry: 'Polska',
    romania: 'Rumunia',
    pieces: 'szt.',
    hours: 'godz.',
    vatIds: { PL: 'NIP', RO: 'NIP UE', DE: 'NIP UE', TR: 'Nr VAT', GB: 'Nr VAT' },
  },
  ro: {
    title: 'Factură',
    correcting: 'Factură de corecție',
    purchase: 'Factură de achiziție',
    seller: 'Furnizor',
    buyer: 'Cumpărător',
    issueDate: '19.11.2025',
    gross: '12.345,67 EUR',
    cell: '1.500,00',
    rate: '23 %',
    np: 'neimpozabil',
    zw: 'scutit',
    duplicate: 'DUPLICAT',
    country: 'Germania',
    status: 'Plătită parțial',
    sellerCountry: 'Polonia',
    romania: 'România',
    pieces: 'buc.',
    hours: 'ore',
    vatIds: { PL: 'Cod TVA', RO: 'CIF', DE: 'Cod TVA', TR: 'Cod fiscal', GB: 'Cod fiscal' },
  },
  tr: {
    title: 'Fatura',
    correcting: 'Düzeltme faturası',
    purchase: 'Alış faturası',
    seller: 'Satıcı',
    buyer: 'Alıcı',
    issueDate: '19.11.2025',
    gross: '€12.345,67',
    cell: '1.500,00',
    rate: '%23',
    np: 'KDV kapsamı dışı',
    zw: 'KDV istisnası',
    duplicate: 'İKİNCİ NÜSHA',
    country: 'Almanya',
    status: 'Kısmen ödendi',
    sellerCountry: 'Polonya',
    romania: 'Romanya',
    pieces: 'adet',
    hours: 'saat',
    vatIds: { PL: 'Vergi No', RO: 'Vergi No', DE: 'Vergi No', TR: 'VKN', GB: 'Vergi No' },
  },
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
      expect(doc.status).toBe(want.status);
      expect(doc.buyer.country).toBe(want.country);
      expect(doc.seller.country).toBe(want.sellerCountry);
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

    it('then each country is printed once, in that language, for the seller and for a buyer whose address ends in its country', () => {
      const doc = build(lang, romanianBuyer);
      expect(doc.seller.addressLines).toEqual(['ul. Portowa 4', '80-001 Gdańsk']);
      expect(doc.seller.country).toBe(want.sellerCountry);
      expect(doc.buyer.addressLines).toEqual(['Str. Lungă 44', '500035 Brașov']);
      expect(doc.buyer.country).toBe(want.romania);
    });

    it('then pieces and hours are written as that language writes them, whichever language the data wrote them in', () => {
      const units = (...given: string[]) =>
        build(lang, {
          items: given.map((unit) => ({
            name: 'Freight',
            quantity: 1,
            unit,
            unitPriceNet: 1,
            taxRate: '23',
            amountNet: 1,
            amountTax: 0.23,
            amountGross: 1.23,
          })),
        }).items.map((item) => item.unit);
      expect(units('pcs', 'h', 'szt.', 'Std.', 'ks', 'adet', 'ore')).toEqual([
        want.pieces,
        want.hours,
        want.pieces,
        want.hours,
        want.pieces,
        want.pieces,
        want.hours,
      ]);
    });

    it('then a VAT id is labelled as that language labels an id of its country', () => {
      const label = (customerVat: string, customerCountry: string) => build(lang, { customerVat, customerCountry }).buyer.vatLabel;
      expect(build(lang).seller.vatLabel).toBe(want.vatIds.PL);
      expect(label('PL1234567890', 'pl')).toBe(want.vatIds.PL);
      expect(label('RO18547290', 'ro')).toBe(want.vatIds.RO);
      expect(label('DE811111111', 'de')).toBe(want.vatIds.DE);
      expect(label('9876543210', 'tr')).toBe(want.vatIds.TR);
      expect(label('GB999999973', 'gb')).toBe(want.vatIds.GB);
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
    expect(doc.seller).toEqual({ name: seller.name, addressLines: ['ul. Portowa 4', '80-001 Gdańsk'], vat: seller.vat, vatLabel: 'VAT ID', country: 'Poland' });
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
    expect(build('en', { customerCountry: '', customerVat: '' }).buyer.country).toBeNull();
  });

  it('when the country code is missing, then the country comes from the last address line, else from the VAT id, as for e-invoices', () => {
    expect(build('pl', { ...romanianBuyer, customerCountry: '' }).buyer).toMatchObject({
      addressLines: ['Str. Lungă 44', '500035 Brașov'],
      country: 'Rumunia',
      vatLabel: 'NIP UE',
    });
    expect(build('pl', { ...romanianBuyer, customerCountry: '', customerVat: '18547290' }).buyer).toMatchObject({ country: 'Rumunia', vatLabel: 'NIP UE' });
    expect(build('pl', { customerCountry: '' }).buyer).toMatchObject({ addressLines: ['Hafenstrasse 9', '47119 Duisburg'], country: 'Niemcy' });
    expect(build('de', { customerCountry: 'el', customerVat: 'EL094259216' }).buyer.country).toBe('Griechenland');
    expect(build('de', { customerCountry: '', customerVat: 'EL094259216' }).buyer.country).toBe('Griechenland');
  });

  it('when the last address line names the country in another language, in capitals, without accents or by its code, then it is not printed again', () => {
    const lines = (customerCountry: string, last: string) =>
      build('pl', { customerCountry, customerAddress: `Street 1\n12345 Town\n${last}` }).buyer.addressLines;
    for (const [country, last] of [
      ['pl', 'POLSKA'],
      ['pl', 'Poland'],
      ['ro', 'Romania'],
      ['ro', 'Rumunia'],
      ['tr', 'Türkiye'],
      ['tr', 'Turkiye'],
      ['tr', 'Turkey'],
      ['cz', 'Česká republika'],
      ['cz', 'Czech Republic'],
      ['cz', 'Česko'],
      ['de', 'Deutschland'],
      ['de', 'DE'],
      ['gb', 'United Kingdom'],
      ['gb', 'UK'],
      ['nl', 'Nederland'],
      ['gr', 'Ελλάδα'],
      ['de', 'Germany.'],
    ]) {
      expect(lines(country!, last!), `${country}: ${last}`).toEqual(['Street 1', '12345 Town']);
    }
  });

  it('when an address does not end in its country, then every line of it is printed', () => {
    const buyer = (customerCountry: string, customerAddress: string) => build('pl', { customerCountry, customerAddress }).buyer;
    expect(buyer('de', 'Hafenstrasse 9\n47119 Duisburg')).toMatchObject({ addressLines: ['Hafenstrasse 9', '47119 Duisburg'], country: 'Niemcy' });
    // A line naming another country is the data's word against the code: both are printed, nothing is dropped.
    expect(buyer('de', 'Hafenstrasse 9\n47119 Duisburg\nPolska')).toMatchObject({
      addressLines: ['Hafenstrasse 9', '47119 Duisburg', 'Polska'],
      country: 'Niemcy',
    });
    // A country's name elsewhere than on the last line is part of the address.
    expect(buyer('pl', 'Polska 12\n00-001 Warszawa').addressLines).toEqual(['Polska 12', '00-001 Warszawa']);
    expect(buyer('lu', 'Luxembourg').addressLines).toEqual([]);
  });

  it('when the seller names no country (no code, no country line, no VAT prefix), then its address prints as given and no country is added', () => {
    const local = { ...seller, address: 'ul. Portowa 4\n80-001 Gdańsk', vat: '5860000000' };
    const doc = buildInvoiceDocument(invoice(), local, 'pl', false, 'UTC');
    expect(doc.seller).toMatchObject({ addressLines: ['ul. Portowa 4', '80-001 Gdańsk'], country: null, vatLabel: 'Nr VAT' });
  });

  it('when the seller gives its country, then it is printed in the document language and a country line naming it is not', () => {
    const lithuanian = { ...seller, address: 'Laisvės al. 1\nLT-44001 Kaunas\nLietuva', vat: 'LT100001919017', country: 'lt' };
    expect(buildInvoiceDocument(invoice(), lithuanian, 'de', false, 'UTC').seller).toMatchObject({
      addressLines: ['Laisvės al. 1', 'LT-44001 Kaunas'],
      country: 'Litauen',
      vatLabel: 'USt-IdNr.',
    });
  });

  it('when it is a purchase invoice, then the labels follow the parties: the foreign seller, the domestic buyer', () => {
    const doc = build('pl', { ...romanianBuyer, type: 'p' });
    expect(doc.seller).toMatchObject({ vat: 'RO18547290', vatLabel: 'NIP UE', country: 'Rumunia' });
    expect(doc.buyer).toMatchObject({ vat: 'PL5860000000', vatLabel: 'NIP', country: 'Polska' });
  });

  it('when a unit is written as any document language prints it, then every other language prints its own word for it', () => {
    for (const from of DOCUMENT_LANGUAGES) {
      for (const [code, word] of Object.entries(INVOICE_TRANSLATIONS[from].units)) {
        const doc = (lang: DocumentLanguage) =>
          build(lang, { items: [{ name: 'x', quantity: 1, unit: word, unitPriceNet: 1, taxRate: '23', amountNet: 1, amountTax: 0.23, amountGross: 1.23 }] });
        for (const to of DOCUMENT_LANGUAGES) {
          expect(doc(to).items[0]!.unit, `${from} ${word} (${code}) in ${to}`).toBe(
            INVOICE_TRANSLATIONS[to].units[code as keyof typeof INVOICE_TRANSLATIONS.en.units],
          );
        }
      }
    }
  });

  it('when a unit is given by its e-invoice code, then the code says what it is; a unit nobody knows prints as given', () => {
    const unit = (lang: DocumentLanguage, given: string, unitCode?: string) =>
      build(lang, {
        items: [{ name: 'x', quantity: 2, unit: given, unitCode, unitPriceNet: 1, taxRate: '23', amountNet: 2, amountTax: 0.46, amountGross: 2.46 }],
      }).items[0]!.unit;
    expect(unit('pl', 'Stunden', 'HUR')).toBe('godz.');
    expect(unit('pl', 'pcs', 'C62')).toBe('szt.');
    expect(unit('cs', 'day')).toBe('den');
    expect(unit('de', 'kurs')).toBe('Fahrt');
    expect(unit('tr', 'trip')).toBe('sefer');
    expect(unit('ro', 'dzień')).toBe('zi');
    expect(unit('pl', 'pallets')).toBe('pal.');
    expect(unit('en', 'gün')).toBe('day');
    // Symbols are the same in every language; ldm (loading metre) is no metre, whatever code the e-invoice gives it.
    expect(unit('pl', 'km')).toBe('km');
    expect(unit('tr', 'ldm')).toBe('ldm');
    expect(unit('de', 'kg')).toBe('kg');
    expect(unit('ro', 'Paket')).toBe('Paket');
    expect(unit('pl', 'usł.')).toBe('usł.');
    expect(unit('pl', '')).toBe('');
  });
});
