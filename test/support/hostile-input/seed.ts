/** The hostile-input test's data beside the fixture: generated invoices and orders, some written behind the service's back. */
import fc from 'fast-check';
import type { Knex } from 'knex';
import { loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { startTestApi, type TestApi } from '../api-harness.js';
import { DIRS } from '../test-fixture.js';
import { REFERENCE_ZONES, TYPES, STATUSES } from './contract.js';
import { startOfDay } from './calendar.js';
import { weighted } from './arbitraries.js';

export const hasher = new Sha256ApiKeyHasher();
export const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000;
export const round2 = (n: number) => Math.round(n * 100) / 100;

export const NAME_POOL = [
  'Acme Logistics',
  'ACME logistics',
  'acme LOGISTICS',
  'Śnieżka Trans',
  'ŁUKASZ Spedycja',
  'Müller & Söhne',
  'Straße Cargo',
  'STRASSE Cargo',
  'Æble Freight',
  'Ørsted Shipping',
  'Ćwik 50% Sp. k.',
  'under_score Ltd',
  'back\\slash GmbH',
  'İzmir Nakliyat',
  'ıssız Taşımacılık',
  'ΜΕΤΑΦΟΡΈΣ Ελλάς',
  'שלום Transport',
  'مرحبا للنقل',
  'e\u0301cole Fret',
  'École Fret',
  'ﬁnance Ltd',
  '  Spaces  Around  ',
  '日本物流',
  '𝔘𝔫𝔦 Freight',
  'Ｆｕｌｌ Logistics',
  'Zeta Spedition',
  'zeta spedition',
  'Alpha',
  'alpha',
  'Ålesund Frakt',
  '한국 운송',
];
/** Pairs where an exact match has a higher id than an order that merely contains it (`ABC-1000` before `abc-1`). */
export const ORDER_NR_POOL = [
  'BH/ORD/1',
  'bh/ord/10',
  'ORD-ß-1',
  'ORD-SS-1',
  'Ω-100',
  'ω-100',
  'é-7',
  'e\u0301-7',
  'x%y',
  'x_y',
  'x\\y',
  'CMR 9',
  '한국-1',
  'ABC-1000',
  'abc-1',
  'DUP-1',
  'dup-1',
  'ﬁ-1',
  'fi-1',
  'İ-5',
  'i-5',
  'LONG-7-X',
  'long-7',
  'Q/12/34',
  'q/12',
  'ŁÓDŹ-99',
  'łódź-9',
];
export const ITEM_POOL = [
  'Road freight Gdansk - Duisburg, 13.6 ldm',
  'Fuel surcharge 10%',
  'Waiting time_2h',
  'Zollabfertigung Straße',
  'Ödeme farkı',
  'Przeładunek w Łodzi',
  'back\\slash fee',
  'Σύνολο μεταφοράς',
  '運賃',
  'Combining a\u0301 fee',
];
export const VAT_POOL = ['DE811111111', 'de811111111', 'PL1234567890', 'CZ12345678', 'ÉCOLE-42', 'e\u0301cole-42', 'ß-1', 'TR1234567890'];
export const COUNTRY_POOL = ['de', 'pl', 'cz', 'tr', 'gb', 'ro', 'fr'];
/** Instants near month edges in the reference zones (their local midnights, and a second before). */
export const EDGE_INSTANTS = REFERENCE_ZONES.flatMap((zone) =>
  [6, 7, 8, 9, 10, 11, 12].flatMap((m) => {
    const start = startOfDay({ y: 2026, m, d: 1 }, zone);
    return [start, start - 1];
  }),
);

export const extraInvoiceArb = fc.record({
  alpine: weighted(1, 5),
  nr: fc.oneof(
    fc
      .tuple(fc.constantFrom('FV', 'fv', 'KOR', 'ZAK'), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 30 }))
      .map(([p, m, n]) => `${p}/${String(m).padStart(2, '0')}/2026/${String(n).padStart(4, '0')}`),
    fc.constantFrom('FV/11/2026/0007', 'NR 100%', 'NR_under', 'NR\\back', 'Ω-σ-ς', 'ÅNGSTRÖM-1', '한국-7', 'ﬁ-1'),
  ),
  type: fc.constantFrom(...TYPES),
  status: fc.constantFrom(...STATUSES),
  branch: fc.integer({ min: 0, max: 4 }),
  issue: fc.oneof(fc.integer({ min: day('2026-06-01'), max: day('2027-02-28') }), fc.constantFrom(...EDGE_INSTANTS)),
  serviceBefore: fc.constantFrom(0, 86_400, 3 * 86_400),
  paidAfter: fc.option(fc.oneof(fc.integer({ min: 0, max: 60 * 86_400 }), fc.constant(0)), { freq: 2 }),
  addedAfter: fc.constantFrom(0, 3600, 86_400 * 3),
  name: fc.constantFrom(...NAME_POOL),
  vat: fc.constantFrom(...VAT_POOL),
  country: fc.constantFrom(...COUNTRY_POOL),
  gross: fc.oneof(
    fc.constantFrom(100, 1450, -100, 0, 999.99, 50),
    fc.integer({ min: -50_000, max: 500_000 }).map((c) => c / 100),
  ),
  orderNrs: fc.array(fc.constantFrom(...ORDER_NR_POOL), { maxLength: 2 }),
  items: fc.array(fc.constantFrom(...ITEM_POOL), { minLength: 1, maxLength: 2 }),
});
export type ExtraInvoice = typeof extraInvoiceArb extends fc.Arbitrary<infer T> ? T : never;

export function invoiceJson(id: number, seed: ExtraInvoice) {
  const net = round2(seed.gross / 1.23);
  const tax = round2(seed.gross - net);
  return {
    id,
    directory: seed.alpine ? DIRS.alpine : DIRS.baltic,
    nr: seed.nr,
    type: seed.type,
    status: seed.status,
    branch_id: seed.branch,
    issue_date: seed.issue,
    service_date: seed.issue - seed.serviceBefore,
    payment_term: seed.issue + 14 * 86_400,
    payment_date: seed.paidAfter === null ? null : seed.issue + seed.paidAfter,
    customer_name: seed.name,
    customer_vat: seed.vat,
    customer_country: seed.country,
    customer_address: 'Generated',
    currency: 'EUR',
    amount_net: net,
    amount_tax: tax,
    amount_gross: seed.gross,
    paid: 0,
    left_to_pay: seed.gross,
    correct_of: null,
    added_time: seed.issue + seed.addedAfter,
    orders: seed.orderNrs.map((nr, i) => ({ type: 'FTL', nr, cmr: `CMR ${id}/${i}`, tasks: [], files: [], contacts: [] })),
    items: seed.items.map((name) => ({
      name,
      quantity: 1,
      unit: 'pcs',
      unit_price_net: net,
      tax_rate: '23',
      amount_net: net,
      amount_tax: tax,
      amount_gross: seed.gross,
    })),
  };
}

/** Writes an invoice the way another system would: plain INSERTs, no service code. */
export async function insertRawInvoice(knex: Knex, invoice: ReturnType<typeof invoiceJson>): Promise<void> {
  const { orders, items, correct_of: _correctOf, ...columns } = invoice;
  await knex('invoices').insert({ ...columns, correct_of_id: null });
  for (const [position, order] of orders.entries()) {
    await knex('invoice_orders').insert({
      invoice_id: invoice.id,
      position,
      type: order.type,
      nr: order.nr,
      cmr: order.cmr,
      tasks: '[]',
      files: '[]',
      contacts: '[]',
    });
  }
  for (const [position, item] of items.entries()) await knex('invoice_items').insert({ invoice_id: invoice.id, position, ...item });
}

export async function deleteRawInvoice(knex: Knex, id: number): Promise<void> {
  await knex('invoice_items').where({ invoice_id: id }).delete();
  await knex('invoice_orders').where({ invoice_id: id }).delete();
  await knex('invoices').where({ id }).delete();
}

/** Beside the fixture: generated invoices and orders through the loader, and a few written behind the service's back. */
export async function seedExtraData(api: TestApi): Promise<void> {
  const seeds = fc.sample(extraInvoiceArb, { seed: 20261122, numRuns: 80 });
  const orders = ORDER_NR_POOL.map((nr, i) => ({ id: 5001 + i, directory: i % 7 === 6 ? DIRS.alpine : DIRS.baltic, nr, ownnr: `OWN-${i}` }));
  await loadFixtures(api.knex, { orders, invoices: seeds.slice(0, 70).map((s, i) => invoiceJson(20_001 + i, s)) }, { hasher });
  for (const [i, s] of seeds.slice(70).entries()) await insertRawInvoice(api.knex, invoiceJson(21_001 + i, s));
  await api.knex('orders').insert([
    { id: 6001, directory: DIRS.baltic, nr: 'ERP/ABC-1', ownnr: 'ERP-1' },
    { id: 6002, directory: DIRS.baltic, nr: 'erp/abc-1', ownnr: 'ERP-2' },
  ]);
}

export async function startReferenceApi(zone: string, clock: Date): Promise<TestApi> {
  const api = await startTestApi({ APP_TIMEZONE: zone }, { now: clock, label: 'hostile-ref', worker: false });
  await seedExtraData(api);
  return api;
}
