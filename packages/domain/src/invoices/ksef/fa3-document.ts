import type { EInvoice, EInvoiceParty } from '../e-invoice/e-invoice.js';
import { xmlSafeText } from '../e-invoice/xml-text.js';
import { FA3_EU_PREFIXES, fa3TaxOf, nipOf } from './ksef-rules.js';

/** Bump when buildFa3Xml writes other bytes for the same document: it is part of the `format=ksef` ETag. */
export const FA3_REVISION = 2;

/**
 * The invoice as the Polish structured invoice FA(3) (schema `schemat_FA(3)_v1-0E.xsd` of the Ministry of Finance),
 * from the same EN 16931 document the other formats are written from, so the two cannot disagree. A correction is
 * RodzajFaktury KOR with its amounts as printed (a price reduction is negative), naming the corrected invoice's
 * number, date and KSeF number (NrKSeFN when it has none). Amounts are in the invoice's currency; with another
 * currency than PLN the tax per rate is also given in PLN (P_14_xW) at `exchange_rate`, which each line names
 * (KursWaluty). UTF-8 without a BOM, as KSeF takes it. Pure: same input, same text, so its SHA-256 (KOD I) is stable.
 * Call it only when `missingForFormat('ksef', …)` is empty.
 */
export function buildFa3Xml(invoice: EInvoice): string {
  const national = invoice.national;
  if (!national) throw new Error('buildFa3Xml needs the document with its national data (withNationalData).');
  // EN 16931 writes a correction as a credit note with positive amounts; FA(3) wants the correction as printed.
  const printed = invoice.typeCode === '381' ? -1 : 1;
  const foreign = invoice.currency !== 'PLN';
  const rate = national.exchangeRate;
  const sums = new Map<string, { net: number; tax: number }>();
  const lines = invoice.lines.map((line, index) => {
    const tax = fa3TaxOf(line.vatCategory, line.vatRate, invoice.buyer.country);
    const net = printed * line.netAmount;
    const sum = sums.get(tax.slot) ?? { net: 0, tax: 0 };
    sum.net = cents(sum.net + net);
    sums.set(tax.slot, sum);
    return { line, index, tax, net };
  });
  // The tax per slot is the breakdown's (the amounts the PDF prints), not recomputed from the lines.
  for (const row of invoice.vatBreakdown) {
    const slot = fa3TaxOf(row.category, row.rate, invoice.buyer.country).slot;
    const sum = sums.get(slot) ?? { net: 0, tax: 0 };
    sum.tax = cents(sum.tax + printed * row.taxAmount);
    sums.set(slot, sum);
  }

  const x = new Xml();
  x.raw('<?xml version="1.0" encoding="UTF-8"?>\n');
  x.open('Faktura', {
    xmlns: 'http://crd.gov.pl/wzor/2025/06/25/13775/',
    'xmlns:etd': 'http://crd.gov.pl/xml/schematy/dziedzinowe/mf/2022/01/05/eD/DefinicjeTypy/',
  });
  x.open('Naglowek');
  x.leaf('KodFormularza', 'FA', { kodSystemowy: 'FA (3)', wersjaSchemy: '1-0E' });
  x.leaf('WariantFormularza', '3');
  x.leaf('DataWytworzeniaFa', national.createdAt);
  x.leaf('SystemInfo', 'Logi API');
  x.close('Naglowek');

  x.open('Podmiot1');
  x.open('DaneIdentyfikacyjne');
  x.leaf('NIP', nipOf(invoice.seller.vatId ?? '')!);
  x.leaf('Nazwa', invoice.seller.name);
  x.close('DaneIdentyfikacyjne');
  address(x, invoice.seller);
  contact(x, invoice.seller);
  x.close('Podmiot1');

  x.open('Podmiot2');
  x.open('DaneIdentyfikacyjne');
  buyerIdentity(x, invoice.buyer);
  x.leaf('Nazwa', invoice.buyer.name);
  x.close('DaneIdentyfikacyjne');
  address(x, invoice.buyer);
  contact(x, invoice.buyer);
  // Not a subordinate unit of a local government, not a member of a VAT group.
  x.leaf('JST', '2');
  x.leaf('GV', '2');
  x.close('Podmiot2');

  x.open('Fa');
  x.leaf('KodWaluty', invoice.currency);
  x.leaf('P_1', invoice.issueDate);
  x.leaf('P_2', invoice.number);
  x.leaf('P_6', invoice.deliveryDate);
  for (const slot of ['1', '2', '3', '4']) {
    const sum = sums.get(slot);
    if (!sum) continue;
    x.leaf(`P_13_${slot}`, amount(sum.net));
    x.leaf(`P_14_${slot}`, amount(sum.tax));
    if (foreign && rate !== null) x.leaf(`P_14_${slot}W`, amount(cents(sum.tax * rate)));
  }
  const oss = sums.get('5');
  if (oss) {
    x.leaf('P_13_5', amount(oss.net));
    x.leaf('P_14_5', amount(oss.tax));
  }
  for (const slot of ['6_1', '6_2', '6_3', '7', '8', '9', '10']) {
    const sum = sums.get(slot);
    if (sum) x.leaf(`P_13_${slot}`, amount(sum.net));
  }
  x.leaf('P_15', amount(printed * invoice.totals.taxInclusive));

  x.open('Adnotacje');
  x.leaf('P_16', '2');
  x.leaf('P_17', '2');
  x.leaf('P_18', sums.has('10') ? '1' : '2');
  x.leaf('P_18A', '2');
  x.open('Zwolnienie');
  const exempt = invoice.vatBreakdown.find((row) => row.category === 'E');
  if (exempt) {
    x.leaf('P_19', '1');
    x.leaf('P_19A', exempt.exemptionReason ?? 'zw');
  } else {
    x.leaf('P_19N', '1');
  }
  x.close('Zwolnienie');
  x.open('NoweSrodkiTransportu');
  x.leaf('P_22N', '1');
  x.close('NoweSrodkiTransportu');
  x.leaf('P_23', '2');
  x.open('PMarzy');
  x.leaf('P_PMarzyN', '1');
  x.close('PMarzy');
  x.close('Adnotacje');

  if (invoice.typeCode === '381') {
    x.leaf('RodzajFaktury', 'KOR');
    if (invoice.notes[0]) x.leaf('PrzyczynaKorekty', invoice.notes[0]);
    x.open('DaneFaKorygowanej');
    x.leaf('DataWystFaKorygowanej', national.corrected?.issueDate ?? invoice.issueDate);
    x.leaf('NrFaKorygowanej', invoice.precedingInvoice ?? '');
    if (national.corrected?.ksefNumber) {
      x.leaf('NrKSeF', '1');
      x.leaf('NrKSeFFaKorygowanej', national.corrected.ksefNumber);
    } else {
      x.leaf('NrKSeFN', '1');
    }
    x.close('DaneFaKorygowanej');
  } else {
    x.leaf('RodzajFaktury', 'VAT');
  }

  for (const { line, index, tax, net } of lines) {
    x.open('FaWiersz');
    x.leaf('NrWierszaFa', String(index + 1));
    x.leaf('P_7', line.name);
    x.leaf('P_8A', line.unitCode);
    x.leaf('P_8B', quantity(Math.abs(line.quantity)));
    x.leaf('P_9A', price(printed * Math.sign(line.quantity || 1) * line.netPrice));
    x.leaf('P_11', amount(net));
    if (tax.rate !== undefined) x.leaf('P_12', tax.rate);
    else x.leaf('P_12_XII', String(tax.ossRate));
    if (foreign && rate !== null) x.leaf('KursWaluty', String(Number(rate.toFixed(6))));
    x.close('FaWiersz');
  }

  x.open('Platnosc');
  x.open('TerminPlatnosci');
  x.leaf('Termin', invoice.dueDate);
  x.close('TerminPlatnosci');
  x.leaf('FormaPlatnosci', '6');
  if (invoice.payment) {
    x.open('RachunekBankowy');
    x.leaf('NrRB', invoice.payment.iban);
    if (invoice.payment.bankName.trim() !== '') x.leaf('NazwaBanku', invoice.payment.bankName);
    x.close('RachunekBankowy');
  }
  x.close('Platnosc');
  x.close('Fa');
  x.close('Faktura');
  return x.text();
}

function buyerIdentity(x: Xml, buyer: EInvoiceParty): void {
  const vat = buyer.vatId?.replace(/[\s-]/g, '').toUpperCase() ?? null;
  const prefix = vat?.slice(0, 2) ?? '';
  const nip = buyer.country === 'PL' && vat ? nipOf(vat) : null;
  if (nip) x.leaf('NIP', nip);
  else if (vat && FA3_EU_PREFIXES.has(prefix) && /^[0-9A-Z+*]{1,12}$/.test(vat.slice(2))) {
    x.leaf('KodUE', prefix);
    x.leaf('NrVatUE', vat.slice(2));
  } else if (vat) {
    x.leaf('KodKraju', buyer.country);
    x.leaf('NrID', vat);
  } else x.leaf('BrakID', '1');
}

function address(x: Xml, party: EInvoiceParty): void {
  x.open('Adres');
  x.leaf('KodKraju', party.country);
  x.leaf('AdresL1', [party.street, party.additionalStreet].filter(Boolean).join(', ') || party.name);
  const place = [party.postalCode, party.city].filter(Boolean).join(' ');
  if (place !== '') x.leaf('AdresL2', place);
  x.close('Adres');
}

function contact(x: Xml, party: EInvoiceParty): void {
  if (!party.contact) return;
  x.open('DaneKontaktowe');
  x.leaf('Email', party.contact.email);
  x.leaf('Telefon', party.contact.phone.slice(0, 16));
  x.close('DaneKontaktowe');
}

function cents(value: number): number {
  const rounded = Math.round(value * 100) / 100;
  return rounded === 0 ? 0 : rounded;
}

function amount(value: number): string {
  return cents(value).toFixed(2);
}

function price(value: number): string {
  return String(Number(value.toFixed(8)));
}

function quantity(value: number): string {
  return String(Number(value.toFixed(6)));
}

/** A minimal writer: elements, attributes and escaped text, two spaces of indentation. */
class Xml {
  private out = '';
  private depth = 0;

  raw(text: string): void {
    this.out += text;
  }

  open(name: string, attributes: Record<string, string> = {}): void {
    this.out += `${'  '.repeat(this.depth)}<${name}${attrs(attributes)}>\n`;
    this.depth += 1;
  }

  close(name: string): void {
    this.depth -= 1;
    this.out += `${'  '.repeat(this.depth)}</${name}>\n`;
  }

  leaf(name: string, value: string, attributes: Record<string, string> = {}): void {
    this.out += `${'  '.repeat(this.depth)}<${name}${attrs(attributes)}>${escape(value)}</${name}>\n`;
  }

  text(): string {
    return this.out;
  }
}

function attrs(attributes: Record<string, string>): string {
  return Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escape(value)}"`)
    .join('');
}

function escape(value: string): string {
  return xmlSafeText(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
