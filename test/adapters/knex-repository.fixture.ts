/**
 * A small data set for the knex repository tests (format: shared/fixtures-format.md),
 * built so that every filter, tie and wildcard case has one known answer.
 */
export const NORTH = 'north-freight';
export const SOUTH = 'south-freight';
export const SORTING = 'sorting-check';

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000;

const company = (name: string) => ({ name, address: 'Portowa 4\n80-001 Gdańsk', vat: 'PL5860000000', bank_account: 'PL61 1090', bank_name: 'Bank' });

interface Seed {
  id: number;
  directory?: string;
  nr: string;
  type?: 's' | 'c' | 'p';
  status?: 'issued' | 'paid' | 'semipaid' | 'overdue';
  branch?: number;
  issue: string;
  paid_on?: string | null;
  customer: string;
  vat?: string;
  country?: string;
  currency?: string;
  gross: number;
  correct_of?: number | null;
  added?: string;
  orders?: string[];
  items?: string[];
}

export function invoice(seed: Seed) {
  const net = Math.round((seed.gross / 1.23) * 100) / 100;
  const tax = Math.round((seed.gross - net) * 100) / 100;
  return {
    id: seed.id,
    directory: seed.directory ?? NORTH,
    nr: seed.nr,
    type: seed.type ?? 's',
    status: seed.status ?? 'issued',
    branch_id: seed.branch ?? 1,
    issue_date: day(seed.issue),
    service_date: day(seed.issue) - 86_400,
    payment_term: day(seed.issue) + 14 * 86_400,
    payment_date: seed.paid_on ? day(seed.paid_on) : null,
    customer_name: seed.customer,
    customer_vat: seed.vat ?? 'DE000',
    customer_country: seed.country ?? 'de',
    customer_address: `${seed.customer}\nStreet 1`,
    currency: seed.currency ?? 'EUR',
    amount_net: net,
    amount_tax: tax,
    amount_gross: seed.gross,
    paid: seed.status === 'paid' ? seed.gross : 0,
    left_to_pay: seed.status === 'paid' ? 0 : seed.gross,
    correct_of: seed.correct_of ?? null,
    added_time: day(seed.added ?? seed.issue) + 3_600,
    orders: (seed.orders ?? [`ORD-${seed.id}`]).map((nr, index) => ({
      type: 'FTL',
      nr,
      cmr: `CMR ${seed.id}-${index}`,
      tasks: [{ step: index + 1, place: 'Łódź' }],
      files: [],
      contacts: [{ name: 'Zoë', phone: '+48 1' }],
    })),
    items: (seed.items ?? ['Road freight']).map((name) => ({
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

/** ASCII names whose order under utf8mb4_unicode_ci was read from MariaDB 10.11 (see SORTED_NAMES). */
export const SORT_NAMES = ['abc', 'ABD', 'a-c', 'a_c', 'a c', 'a.c', 'a1c', 'a$c', 'a~c', 'Zed', 'zebra', 'a@c', 'a#c', 'A', 'ab', '0ab', '_x', 'B2', 'b10'];

export const repositoryFixture = {
  clients: [
    { directory: NORTH, api_key: 'north-key-0123456789', company: company('North Freight Sp. z o.o.') },
    { directory: SOUTH, api_key: 'south-key-0123456789', company: company('South Freight GmbH') },
    { directory: SORTING, api_key: 'sorting-key-0123456789', company: company('Sorting') },
  ],
  file_categories: [
    { id: 1, name: 'CMR', visible_customer: 1 },
    { id: 2, name: 'Internal', visible_customer: 0 },
  ],
  orders: [
    { id: 11, directory: NORTH, nr: 'BH/2026/0412-B', ownnr: 'PO-1' },
    { id: 12, directory: NORTH, nr: 'BH/2026/0412', ownnr: 'PO-2' },
    { id: 13, directory: NORTH, nr: 'bh/2026/0412x', ownnr: 'PO-3' },
    { id: 14, directory: NORTH, nr: 'WILD%_\\CARD', ownnr: 'PO-4' },
    { id: 15, directory: NORTH, nr: 'WILDxyCARD', ownnr: 'PO-5' },
    { id: 16, directory: NORTH, nr: 'ŁÓDŹ/77', ownnr: 'PO-6' },
    { id: 10, directory: SOUTH, nr: 'BH/2026/0412', ownnr: 'S-1' },
  ],
  invoices: [
    invoice({
      id: 101,
      nr: 'FV/2026/001',
      issue: '2026-11-01',
      customer: 'Łódź Cargo S.A.',
      vat: 'PL111',
      country: 'pl',
      currency: 'PLN',
      gross: 100,
      orders: ['ORD-A1', 'ORD-A2'],
      items: ['Road freight Warsaw - Berlin', 'Loading ORD-A'],
    }),
    invoice({
      id: 102,
      nr: 'FV/2026/002',
      status: 'paid',
      branch: 2,
      issue: '2026-11-02',
      paid_on: '2026-11-10',
      customer: 'alpha Transport',
      vat: 'de222',
      gross: 250.5,
      orders: ['ORD-B1'],
      items: ['Fuel surcharge 100% flat', 'Toll_fee \\ A4'],
    }),
    invoice({
      id: 103,
      nr: 'KOR/2026/001',
      type: 'c',
      issue: '2026-11-02',
      customer: 'Beta GmbH',
      vat: 'DE333',
      gross: -50,
      correct_of: 101,
      added: '2026-11-21',
    }),
    invoice({
      id: 104,
      nr: 'ZAK/2026/001',
      type: 'p',
      status: 'overdue',
      branch: 3,
      issue: '2026-10-15',
      customer: 'ÄRZTE Logistik',
      vat: 'CZ444',
      country: 'cz',
      currency: 'CZK',
      gross: 1000,
      orders: ['X%Y_Z'],
      items: ['Customs 50%'],
    }),
    invoice({
      id: 105,
      nr: 'FV/2026/003',
      status: 'semipaid',
      branch: 2,
      issue: '2026-11-05',
      paid_on: '2026-11-20',
      customer: 'zeta Spedition',
      vat: 'RO555',
      country: 'ro',
      currency: 'RON',
      gross: 250.5,
    }),
    invoice({
      id: 106,
      nr: 'FV%2026_004',
      status: 'paid',
      issue: '2026-11-05',
      paid_on: '2026-11-06',
      customer: 'Gamma',
      vat: 'GB666',
      country: 'gb',
      currency: 'GBP',
      gross: 10,
      items: ['Storage'],
    }),
    invoice({
      id: 107,
      nr: 'FV/2026/005',
      issue: '2026-11-07',
      customer: 'ŁÓDŹ Express',
      vat: 'TR777',
      country: 'tr',
      currency: 'TRY',
      gross: 77,
      orders: ['ORDA9'],
      items: ['Handling'],
    }),
    invoice({
      id: 201,
      directory: SOUTH,
      nr: 'FV/2026/001',
      issue: '2026-11-01',
      customer: 'Łódź Cargo S.A.',
      vat: 'PL111',
      country: 'pl',
      gross: 100,
      orders: ['ORD-A1'],
    }),
    invoice({ id: 202, directory: SOUTH, nr: 'KOR/S/1', type: 'c', issue: '2026-11-03', customer: 'Łódź Cargo S.A.', gross: -10, correct_of: 201 }),
    ...SORT_NAMES.map((customer, index) => invoice({ id: 301 + index, directory: SORTING, nr: `S-${index}`, issue: '2026-11-01', customer, gross: 1 })),
  ],
};

export const NORTH_IDS = [101, 102, 103, 104, 105, 106, 107];
