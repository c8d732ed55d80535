/**
 * Writes fixtures/demo.json: two client directories, file categories, orders
 * and a few hundred invoices over the six months before 2026-11-22.
 * Deterministic (seeded random, fixed "today"), so the committed file only
 * changes when this script does. Run: `npx tsx scripts/generate-demo-fixture.ts`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TODAY = Date.UTC(2026, 10, 22) / 1000;
const DAY = 86_400;

/** mulberry32: small, seedable, good enough for demo data. */
function rng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  };
}
const random = rng(20_261_122);
const round2 = (value: number) => Math.round(value * 100) / 100;
const pad = (value: number, width: number) => String(value).padStart(width, '0');

interface Customer {
  name: string;
  vat: string;
  country: string;
  address: string;
}

const CUSTOMERS: Customer[] = [
  { name: 'Rheinfracht GmbH', vat: 'DE811111111', country: 'de', address: 'Hafenstraße 9\n47119 Duisburg\nDeutschland' },
  { name: 'Müller & Söhne Spedition KG', vat: 'DE812345678', country: 'de', address: 'Güterbahnhofstraße 3\n04356 Leipzig\nDeutschland' },
  { name: 'Łódź Cargo S.A.', vat: 'PL7251234561', country: 'pl', address: 'ul. Włókiennicza 12\n90-001 Łódź\nPolska' },
  { name: 'Przedsiębiorstwo Transportowe Żuraw Sp. z o.o.', vat: 'PL5252345675', country: 'pl', address: 'ul. Źródlana 5\n80-180 Gdańsk\nPolska' },
  { name: 'Beta 100% Freight_Co Sp. j.', vat: 'PL9512345675', country: 'pl', address: 'ul. Portowa 1\n81-341 Gdynia\nPolska' },
  { name: 'Dopravní společnost Říčany s.r.o.', vat: 'CZ27123456', country: 'cz', address: 'Průmyslová 1\n251 01 Říčany\nČeská republika' },
  { name: 'Česká Logistika a.s.', vat: 'CZ45274649', country: 'cz', address: 'Na Příkopě 8\n110 00 Praha 1\nČeská republika' },
  { name: 'Transporturi Științifice Brașov S.R.L.', vat: 'RO18547290', country: 'ro', address: 'Str. Lungă 44\n500035 Brașov\nRomânia' },
  { name: 'Gamma İstanbul Lojistik A.Ş.', vat: 'TR1234567890', country: 'tr', address: 'Ambarlı Limanı Cd. 7\n34320 Avcılar/İstanbul\nTürkiye' },
  { name: 'Öztürk Nakliyat Ltd. Şti.', vat: 'TR9876543210', country: 'tr', address: 'Organize Sanayi Bölgesi 3\n16140 Nilüfer/Bursa\nTürkiye' },
  { name: 'Thames Haulage Ltd', vat: 'GB999999973', country: 'gb', address: '12 Dock Road\nTilbury RM18 7EH\nUnited Kingdom' },
  { name: 'Van der Berg Transport B.V.', vat: 'NL859999999B01', country: 'nl', address: 'Waalhaven Z.z. 21\n3089 JH Rotterdam\nNederland' },
];

const CURRENCY: Record<string, string> = { de: 'EUR', nl: 'EUR', pl: 'PLN', cz: 'CZK', ro: 'RON', tr: 'TRY', gb: 'GBP' };
/** Domestic VAT per customer country; outside the EU the service is not subject to VAT ("np"). */
const TAX_RATE: Record<string, string> = { de: '19', nl: '21', pl: '23', cz: '21', ro: '19', tr: 'np', gb: 'np' };
/** Rough size of a freight price in each currency. */
const PRICE_SCALE: Record<string, number> = { EUR: 1, PLN: 4.3, CZK: 25, RON: 5, TRY: 35, GBP: 0.85 };
const PLACES = [
  'Gdańsk',
  'Poznań',
  'Łódź',
  'Duisburg',
  'Hamburg',
  'München',
  'Praha',
  'Brno',
  'Brașov',
  'İstanbul',
  'Rotterdam',
  'Felixstowe',
  'Wrocław',
  'Ostrava',
];
const CONTACTS = [
  { name: 'Anna Wiśniewska', phone: '+48 601 234 567', email: 'a.wisniewska@example.com' },
  { name: 'Jürgen Groß', phone: '+49 170 1234567', email: 'j.gross@example.com' },
  { name: 'Tomáš Dvořák', phone: '+420 601 123 456', email: 't.dvorak@example.com' },
  { name: 'Ayşe Yılmaz', phone: '+90 532 123 45 67', email: 'a.yilmaz@example.com' },
];

const DIRECTORIES = [
  {
    directory: 'baltic-haulage',
    api_key: 'demo-key-baltic',
    company: {
      name: 'Baltic Haulage Sp. z o.o.',
      address: 'ul. Portowa 4\n80-001 Gdańsk\nPolska',
      vat: 'PL5860000002',
      bank_account: 'PL61 1090 1014 0000 0712 1981 2874',
      bank_name: 'Santander Bank Polska',
      contact: { name: 'Marta Nowak', phone: '+48 58 320 14 00', email: 'faktury@baltic-haulage.example' },
    },
    orderCount: 55,
    invoiceCount: 230,
    orderNr: (seq: number) => `BH/2026/${pad(412 + seq, 4)}`,
    invoiceNr: (month: number, seq: number, type: string) => `${type === 'c' ? 'KOR' : 'FV'}/${pad(month, 2)}/2026/${pad(seq, 4)}`,
  },
  {
    directory: 'alpine-logistics',
    api_key: 'demo-key-alpine',
    company: {
      name: 'Alpine Logistics GmbH',
      address: 'Industriestraße 15\n85748 Garching bei München\nDeutschland',
      vat: 'DE298765432',
      bank_account: 'DE89 3704 0044 0532 0130 00',
      bank_name: 'Commerzbank',
      contact: { name: 'Stefan Huber', phone: '+49 89 3219 4400', email: 'rechnung@alpine-logistics.example' },
    },
    orderCount: 25,
    invoiceCount: 110,
    orderNr: (seq: number) => (seq === 7 ? 'ŁÓDŹ/2026/0077' : `AL-2026-${pad(seq + 1, 5)}`),
    invoiceNr: (month: number, seq: number, type: string) => `${type === 'c' ? 'GS' : 'RE'}-2026${pad(month, 2)}-${pad(seq, 4)}`,
  },
] as const;

const categories = [
  { id: 1, name: 'CMR', visible_customer: 1 },
  { id: 2, name: 'Delivery note', visible_customer: 1 },
  { id: 3, name: 'Invoice copy', visible_customer: 1 },
  { id: 4, name: 'Photo', visible_customer: 0 },
  { id: 5, name: 'Other', visible_customer: 0 },
];

let nextOrderId = 3001;
const orders = DIRECTORIES.flatMap((d) =>
  Array.from({ length: d.orderCount }, (_, seq) => ({
    id: nextOrderId++,
    directory: d.directory,
    nr: d.orderNr(seq),
    ownnr: random.chance(0.2) ? '' : `PO-${random.int(10, 99)}-${random.int(1, 9)}`,
  })),
);

type Invoice = Record<string, unknown> & {
  id: number;
  directory: string;
  type: string;
  nr: string;
  amount_gross: number;
  issue_date: number;
  customer: Customer;
};

function item(name: string, quantity: number, unit: string, unitPrice: number, taxRate: string) {
  const net = round2(quantity * unitPrice);
  const tax = /^\d+$/.test(taxRate) ? round2((net * Number(taxRate)) / 100) : 0;
  return { name, quantity, unit, unit_price_net: unitPrice, tax_rate: taxRate, amount_net: net, amount_tax: tax, amount_gross: round2(net + tax) };
}

function freightItems(customer: Customer, currency: string) {
  const rate = TAX_RATE[customer.country]!;
  const from = random.pick(PLACES);
  const to = random.pick(PLACES.filter((p) => p !== from));
  const items = [
    item(
      `Road freight ${from} - ${to}, ${random.pick(['13.6 ldm', '24 t', '6 pallets', '33 EUR-pallets'])}`,
      1,
      'pcs',
      round2(random.int(450, 2900) * PRICE_SCALE[currency]!),
      rate,
    ),
  ];
  if (random.chance(0.4)) items.push(item('Fuel surcharge', 1, 'pcs', round2(random.int(30, 180) * PRICE_SCALE[currency]!), rate));
  if (random.chance(0.2)) items.push(item('Waiting time at unloading', random.int(1, 6), 'h', round2(35 * PRICE_SCALE[currency]!), rate));
  // Cargo insurance is VAT-exempt.
  if (random.chance(0.15)) items.push(item('Cargo insurance', 1, 'pcs', round2(random.int(15, 60) * PRICE_SCALE[currency]!), 'zw'));
  return items;
}

function invoiceOrders(directory: string, issueDate: number) {
  const mine = orders.filter((o) => o.directory === directory);
  return Array.from({ length: random.chance(0.2) ? 2 : 1 }, () => {
    const order = random.pick(mine);
    const loading = issueDate - random.int(3, 10) * DAY;
    return {
      type: random.pick(['FTL', 'LTL', 'Groupage', 'Express']),
      nr: order.nr,
      cmr: `CMR ${random.int(100_000, 999_999)}`,
      tasks: [
        { type: 'loading', place: random.pick(PLACES), date: loading },
        { type: 'unloading', place: random.pick(PLACES), date: loading + random.int(1, 3) * DAY },
      ],
      files: random.chance(0.5) ? [{ name: `CMR_${order.nr.replace(/\W/g, '_')}.pdf`, category: 'CMR' }] : [],
      contacts: [random.pick(CONTACTS)],
    };
  });
}

/** Status and payment follow the dates: unpaid past the term is overdue. */
function settle(gross: number, issueDate: number, paymentTerm: number) {
  const due = paymentTerm < TODAY;
  const roll = random.next();
  if (roll < (due ? 0.65 : 0.3)) {
    const paidOn = Math.min(TODAY, issueDate + random.int(2, Math.max(3, (paymentTerm - issueDate) / DAY + 10)) * DAY);
    return { status: 'paid', payment_date: paidOn, paid: gross, left_to_pay: 0 };
  }
  if (roll < (due ? 0.8 : 0.45)) {
    const paid = round2((gross * random.int(20, 80)) / 100);
    return { status: 'semipaid', payment_date: Math.min(TODAY, issueDate + random.int(5, 25) * DAY), paid, left_to_pay: round2(gross - paid) };
  }
  return { status: due ? 'overdue' : 'issued', payment_date: null, paid: 0, left_to_pay: gross };
}

let nextInvoiceId = 100_001;
const invoices: Invoice[] = [];
for (const d of DIRECTORIES) {
  const dates = Array.from({ length: d.invoiceCount }, () => TODAY - random.int(0, 180) * DAY).sort((a, b) => a - b);
  const perMonth = new Map<string, number>();
  const mine: Invoice[] = [];
  for (const issueDate of dates) {
    const earlierSales = mine.filter((i) => i.type === 's' && i.issue_date < issueDate);
    const type = earlierSales.length > 5 && random.chance(0.08) ? 'c' : random.chance(0.15) ? 'p' : 's';
    const month = new Date(issueDate * 1000).getUTCMonth() + 1;
    const key = `${type === 'c' ? 'c' : type}-${month}`;
    const seq = (perMonth.get(key) ?? 0) + 1;
    perMonth.set(key, seq);
    const corrected = type === 'c' ? random.pick(earlierSales) : null;
    const customer = corrected ? corrected.customer : random.pick(CUSTOMERS);
    const currency = corrected ? String(corrected.currency) : random.chance(0.15) ? 'EUR' : CURRENCY[customer.country]!;
    const items = corrected
      ? [
          item(
            `Correction of ${corrected.nr}: price reduction`,
            1,
            'pcs',
            -round2((Number(corrected.amount_net) * random.int(5, 30)) / 100),
            (corrected.items as Array<{ tax_rate: string }>)[0]!.tax_rate,
          ),
        ]
      : freightItems(customer, currency);
    const net = round2(items.reduce((s, i) => s + i.amount_net, 0));
    const tax = round2(items.reduce((s, i) => s + i.amount_tax, 0));
    const gross = round2(net + tax);
    const paymentTerm = issueDate + random.pick([14, 30, 45, 60]) * DAY;
    const settlement = type === 'c' ? { status: 'issued', payment_date: null, paid: 0, left_to_pay: gross } : settle(gross, issueDate, paymentTerm);
    const invoice: Invoice = {
      id: nextInvoiceId++,
      directory: d.directory,
      nr: type === 'p' ? `ZAK/${pad(month, 2)}/2026/${pad(seq, 4)}` : d.invoiceNr(month, seq, type),
      type,
      status: settlement.status,
      branch_id: random.int(1, 4),
      issue_date: issueDate,
      service_date: issueDate - random.int(0, 5) * DAY,
      payment_term: paymentTerm,
      payment_date: settlement.payment_date,
      customer_name: customer.name,
      customer_vat: customer.vat,
      customer_country: customer.country,
      customer_address: customer.address,
      currency,
      amount_net: net,
      amount_tax: tax,
      amount_gross: gross,
      paid: settlement.paid,
      left_to_pay: settlement.left_to_pay,
      correct_of: corrected ? corrected.id : null,
      added_time: issueDate + random.int(7 * 3600, 17 * 3600),
      orders: corrected ? corrected.orders : invoiceOrders(d.directory, issueDate),
      items,
      customer,
    };
    mine.push(invoice);
  }
  invoices.push(...mine);
}

/**
 * National e-invoice data (fixtures-format.md), derived from what was drawn above without drawing again, so the rest
 * of the file stays as it was: counties of Romanian buyers, Leitweg-IDs of German buyers, exchange rates to the
 * seller's currency, and KSeF numbers of the Polish client's own invoices.
 */
const COUNTIES: Record<string, string> = { RO18547290: 'RO-BV' };
const LEITWEG_IDS: Record<string, string> = { DE811111111: leitwegId('05112000', 'EINKAUF'), DE812345678: leitwegId('14713000', 'LOGISTIK') };
/** Units of the seller's currency for one unit of the invoice's: fixed demo rates (a day's NBP and BNR tables). */
const RATES: Record<string, Record<string, number>> = {
  PLN: { EUR: 4.2456, CZK: 0.1714, TRY: 0.0987, GBP: 4.8731, RON: 0.8342 },
  RON: { EUR: 5.0912, PLN: 1.1988, CZK: 0.2055, TRY: 0.1184, GBP: 5.8433 },
};
const NATIONAL_CURRENCY: Record<string, string> = { pl: 'PLN', ro: 'RON' };

function national(invoice: Invoice, company: { vat: string }) {
  const sellerCountry = invoice.type === 'p' ? String(invoice.customer_country) : company.vat.slice(0, 2).toLowerCase();
  const home = NATIONAL_CURRENCY[sellerCountry];
  const rate = home && home !== invoice.currency ? RATES[home]![String(invoice.currency)] : undefined;
  const vat = String(invoice.customer_vat);
  const nip = company.vat.slice(2);
  return {
    ...(COUNTIES[vat] ? { customer_county: COUNTIES[vat] } : {}),
    ...(LEITWEG_IDS[vat] ? { buyer_reference: LEITWEG_IDS[vat] } : {}),
    ...(rate ? { exchange_rate: rate } : {}),
    // The Polish client's own invoices went through KSeF on their issue day.
    ...(invoice.type !== 'p' && company.vat.startsWith('PL') ? { ksef_number: ksefNumber(nip, Number(invoice.issue_date), Number(invoice.id)) } : {}),
  };
}

/** A Leitweg-ID with its check digits (ISO 7064 MOD 97-10, as the KoSIT format specifies). */
function leitwegId(coarse: string, fine: string): string {
  const digits = `${coarse}${fine}`.replace(/[A-Z]/g, (letter) => String(letter.charCodeAt(0) - 55));
  const check = 98 - Number(BigInt(`${digits}00`) % 97n);
  return `${coarse}-${fine}-${String(check).padStart(2, '0')}`;
}

/** NIP-YYYYMMDD-technical part-CRC-8 (polynomial 0x07, initial 0x00) over the first 32 characters, as KSeF numbers are. */
function ksefNumber(nip: string, issueDate: number, id: number): string {
  const day = new Date(issueDate * 1000).toISOString().slice(0, 10).replace(/-/g, '');
  const data = `${nip}-${day}-${(0x0100_0000_0000 + id).toString(16).toUpperCase().padStart(12, '0')}`;
  let crc = 0;
  for (const byte of Buffer.from(data, 'ascii')) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  return `${data}-${crc.toString(16).toUpperCase().padStart(2, '0')}`;
}

const companies = new Map<string, { vat: string }>(DIRECTORIES.map((d) => [d.directory, d.company]));
const fixture = {
  clients: DIRECTORIES.map((d) => ({ directory: d.directory, api_key: d.api_key, company: d.company })),
  file_categories: categories,
  orders,
  invoices: invoices.map(({ customer: _customer, ...invoice }) => ({ ...invoice, ...national(invoice as Invoice, companies.get(String(invoice.directory))!) })),
};

const target = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'demo.json');
writeFileSync(target, `${JSON.stringify(fixture, null, 2)}\n`);
console.log(`Wrote ${target}: ${fixture.clients.length} clients, ${orders.length} orders, ${invoices.length} invoices`);
