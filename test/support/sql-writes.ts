import type { Knex } from 'knex';

/** An invoice row as another system (an ERP's load) would insert it straight into the table. */
export async function insertInvoiceRow(db: Knex, id: number, directory: string, nr: string, overrides: Record<string, unknown> = {}): Promise<void> {
  await db('invoices').insert({
    id,
    directory,
    nr,
    type: 's',
    status: 'issued',
    branch_id: 1,
    issue_date: 1_763_800_000,
    service_date: 1_763_800_000,
    payment_term: 1_765_000_000,
    payment_date: null,
    customer_name: 'Inserted by SQL',
    customer_vat: 'PL1',
    customer_country: 'pl',
    customer_address: 'Somewhere',
    currency: 'PLN',
    amount_net: 10,
    amount_tax: 2.3,
    amount_gross: 12.3,
    paid: 0,
    left_to_pay: 12.3,
    correct_of_id: null,
    added_time: 1_763_800_000,
    ...overrides,
  });
}
