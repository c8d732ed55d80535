/**
 * A small, fully known data set for API tests (format: shared/fixtures-format.md).
 * Dates are fixed around 2026-11 so that filters have exact answers.
 */
export const KEYS = { baltic: 'test-key-baltic-0123456789', alpine: 'test-key-alpine-0123456789' } as const;
export const DIRS = { baltic: 'baltic-haulage', alpine: 'alpine-logistics' } as const;

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000;

const company = (name: string) => ({
  name,
  address: 'ul. Portowa 4\n80-001 Gdańsk\nPoland',
  vat: 'PL5860000000',
  bank_account: 'PL61 1090 1014 0000 0712 1981 2874',
  bank_name: 'Santander Bank Polska',
});

interface InvoiceSeed {
  id: number;
  directory?: string;
  nr: string;
  type?: 's' | 'c' | 'p';
  status?: 'issued' | 'paid' | 'semipaid' | 'overdue';
  branch_id?: number;
  issue: string;
  payment_date?: string | null;
  customer_name?: string;
  customer_vat?: string;
  customer_country?: string;
  customer_address?: string;
  currency?: string;
  gross?: number;
  correct_of?: number | null;
  order_nr?: string;
  item?: string;
  added?: string;
}

function invoice(seed: InvoiceSeed) {
  const gross = seed.gross ?? 1000;
  const net = Math.round((gross / 1.23) * 100) / 100;
  const paid = seed.status === 'paid' ? gross : seed.status === 'semipaid' ? Math.round(gross * 50) / 100 : 0;
  return {
    id: seed.id,
    directory: seed.directory ?? DIRS.baltic,
    nr: seed.nr,
    type: seed.type ?? 's',
    status: seed.status ?? 'issued',
    branch_id: seed.branch_id ?? 1,
    issue_date: day(seed.issue),
    service_date: day(seed.issue) - 86400,
    payment_term: day(seed.issue) + 14 * 86400,
    payment_date: seed.payment_date ? day(seed.payment_date) : null,
    customer_name: seed.customer_name ?? 'Rheinfracht GmbH',
    customer_vat: seed.customer_vat ?? 'DE811111111',
    customer_country: seed.customer_country ?? 'de',
    customer_address: seed.customer_address ?? 'Hafenstrasse 9\n47119 Duisburg',
    currency: seed.currency ?? 'EUR',
    amount_net: net,
    amount_tax: Math.round((gross - net) * 100) / 100,
    amount_gross: gross,
    paid,
    left_to_pay: Math.round((gross - paid) * 100) / 100,
    correct_of: seed.correct_of ?? null,
    added_time: seed.added ? day(seed.added) + 3600 : day(seed.issue) + 3600,
    orders: [{ type: 'FTL', nr: seed.order_nr ?? `BH/ORD/${seed.id}`, cmr: `CMR ${seed.id}`, tasks: [{ step: 1 }], files: [], contacts: [] }],
    items: [
      {
        name: seed.item ?? 'Road freight Gdansk - Duisburg, 13.6 ldm',
        quantity: 1,
        unit: 'pcs',
        unit_price_net: net,
        tax_rate: '23',
        amount_net: net,
        amount_tax: Math.round((gross - net) * 100) / 100,
        amount_gross: gross,
      },
    ],
  };
}

export const testFixture = {
  clients: [
    { directory: DIRS.baltic, api_key: KEYS.baltic, company: company('Baltic Haulage Sp. z o.o.') },
    { directory: DIRS.alpine, api_key: KEYS.alpine, company: company('Alpine Logistics GmbH') },
  ],
  file_categories: [
    { id: 1, name: 'CMR', visible_customer: 1 },
    { id: 2, name: 'Delivery note', visible_customer: 1 },
    { id: 3, name: 'Internal', visible_customer: 0 },
  ],
  orders: [
    { id: 3001, directory: DIRS.baltic, nr: 'BH/2026/0412', ownnr: 'PO-55-1' },
    { id: 3002, directory: DIRS.baltic, nr: 'bh/2026/0412-B', ownnr: 'PO-55-2' },
    { id: 3003, directory: DIRS.baltic, nr: 'WILD%_\\CARD-1', ownnr: 'PO-W' },
    { id: 3004, directory: DIRS.baltic, nr: 'ŁÓDŹ/77', ownnr: 'PO-L' },
    { id: 3005, directory: DIRS.baltic, nr: 'WILDxyCARD-2', ownnr: 'PO-X' },
    { id: 4001, directory: DIRS.alpine, nr: 'AL/2026/0001', ownnr: 'AL-PO-1' },
  ],
  invoices: [
    invoice({ id: 9001, nr: 'FV/11/2026/0007', issue: '2026-11-18', gross: 1450, order_nr: 'BH/2026/0412', customer_name: 'Rheinfracht GmbH' }),
    invoice({
      id: 9002,
      nr: 'FV/11/2026/0008',
      issue: '2026-11-18',
      gross: 300,
      status: 'paid',
      payment_date: '2026-11-20',
      customer_name: 'łódź Cargo S.A.',
      customer_vat: 'PL1234567890',
      customer_country: 'pl',
      currency: 'PLN',
    }),
    invoice({ id: 9003, nr: 'FV/10/2026/0100', issue: '2026-10-31', gross: 999.99, status: 'overdue', branch_id: 2, customer_name: 'Ämter & Co KG' }),
    invoice({
      id: 9004,
      nr: 'FV/10/2026/0101',
      issue: '2026-10-01',
      gross: 50,
      status: 'semipaid',
      payment_date: '2026-10-10',
      branch_id: 2,
      customer_name: 'alpha transport',
    }),
    invoice({ id: 9005, nr: 'KOR/11/2026/0001', type: 'c', issue: '2026-11-02', gross: -100, correct_of: 9001, customer_name: 'Rheinfracht GmbH' }),
    invoice({
      id: 9006,
      nr: 'ZAK/11/2026/0001',
      type: 'p',
      issue: '2026-11-05',
      gross: 2000,
      branch_id: 3,
      customer_name: 'Beta 100% Freight_Co',
      customer_vat: 'CZ12345678',
      customer_country: 'cz',
      currency: 'CZK',
      item: 'Fuel surcharge 100%_off \\ special',
    }),
    invoice({
      id: 9007,
      nr: 'FV/09/2026/0050',
      issue: '2026-09-15',
      gross: 7500,
      status: 'paid',
      payment_date: '2026-09-30',
      customer_name: 'Zeta Spedition',
      customer_country: 'ro',
      customer_vat: 'RO123456',
      currency: 'RON',
    }),
    invoice({
      id: 9008,
      nr: 'FV/08/2026/0001',
      issue: '2026-08-24',
      gross: 120,
      customer_name: 'Gamma İstanbul Lojistik',
      customer_country: 'tr',
      customer_vat: 'TR1234567890',
      customer_address: 'Ertuğrul Gazi Cd. 7\n16140 Nilüfer/Bursa\nTürkiye',
      currency: 'TRY',
      added: '2026-11-20',
    }),
    invoice({
      id: 9009,
      nr: 'FV/11/2026/0009',
      issue: '2026-11-22',
      gross: 1450,
      customer_name: 'Delta Freight',
      customer_country: 'gb',
      customer_vat: 'GB999999973',
      currency: 'GBP',
    }),
    invoice({
      id: 9101,
      directory: DIRS.alpine,
      nr: 'AL/FV/2026/0001',
      issue: '2026-11-10',
      gross: 5000,
      customer_name: 'Rheinfracht GmbH',
      order_nr: 'AL/2026/0001',
    }),
  ],
};

export const BALTIC_INVOICE_COUNT = testFixture.invoices.filter((i) => i.directory === DIRS.baltic).length;
