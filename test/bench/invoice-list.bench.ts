import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex, KnexInvoiceRepository, loadFixtures, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { defaultInvoiceCriteria, type InvoiceCriteria } from '@logi/domain';
import { compare } from './bench-kit.js';

/**
 * The invoice list on a tenant with many invoices (SQLite, the embedded
 * profile). Candidate: the schema as migrated, with an index per sort field.
 * Baseline: the same data with those indexes dropped. Both in this process.
 */
const INVOICES = Number(process.env.BENCH_INVOICES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const DIRECTORY = 'bench-haulage';

function fixture(count: number) {
  const statuses = ['issued', 'paid', 'semipaid', 'overdue'] as const;
  const types = ['s', 's', 's', 'c', 'p'] as const;
  const base = Date.UTC(2026, 0, 1) / 1000;
  return {
    clients: [
      { directory: DIRECTORY, api_key: 'bench-key-1', company: { name: 'B', address: 'A', vat: 'V', bank_account: 'X', bank_name: 'Y' } },
      { directory: 'other-tenant', api_key: 'bench-key-2', company: { name: 'B', address: 'A', vat: 'V', bank_account: 'X', bank_name: 'Y' } },
    ],
    file_categories: [],
    orders: [],
    invoices: Array.from({ length: count }, (_, i) => {
      const gross = ((i * 7919) % 100_000) / 10;
      const issue = base + ((i * 104729) % (320 * 86400));
      return {
        id: i + 1,
        directory: i % 10 === 0 ? 'other-tenant' : DIRECTORY,
        nr: `FV/${(i % 12) + 1}/2026/${String(i).padStart(6, '0')}`,
        type: types[i % types.length],
        status: statuses[i % statuses.length],
        branch_id: (i % 5) + 1,
        issue_date: issue,
        service_date: issue - 86400,
        payment_term: issue + 14 * 86400,
        payment_date: i % 4 === 1 ? issue + 5 * 86400 : null,
        customer_name: `Customer ${(i * 31) % 997} Logistics`,
        customer_vat: `PL${String((i * 31) % 997).padStart(10, '0')}`,
        customer_country: 'pl',
        customer_address: 'Street 1',
        currency: 'EUR',
        amount_net: gross,
        amount_tax: 0,
        amount_gross: gross,
        paid: 0,
        left_to_pay: gross,
        correct_of: null,
        added_time: issue + 3600,
        orders: [{ type: 'FTL', nr: `ORD/${i}`, cmr: `CMR ${i}`, tasks: [], files: [], contacts: [] }],
        items: [{ name: `Freight leg ${i}`, quantity: 1, unit: 'pcs', unit_price_net: gross, tax_rate: '23', amount_net: gross, amount_tax: 0, amount_gross: gross }],
      };
    }),
  };
}

const criteria = (overrides: Partial<InvoiceCriteria>): InvoiceCriteria => ({ ...defaultInvoiceCriteria(DIRECTORY), ...overrides });

async function database(dir: string): Promise<Knex> {
  const knex = createKnex({ databaseUrl: null, dataDir: dir });
  await migrateLatest(knex);
  return knex;
}

const dirs = await Promise.all([0, 1].map(() => mkdtemp(path.join(os.tmpdir(), 'logi-bench-'))));
const [indexed, bare] = await Promise.all(dirs.map(database)) as [Knex, Knex];
const data = fixture(INVOICES);
for (const knex of [indexed, bare]) await loadFixtures(knex, data, { hasher: new Sha256ApiKeyHasher() });
const indexNames = (await bare.raw(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'invoices' AND name LIKE 'invoices_directory_%'`)) as Array<{ name: string }>;
for (const { name } of indexNames) await bare.raw(`DROP INDEX "${name}"`);
await bare.raw('ANALYZE');
await indexed.raw('ANALYZE');

const withIndexes = new KnexInvoiceRepository(indexed);
const withoutIndexes = new KnexInvoiceRepository(bare);
console.log(`invoice list, SQLite, ${INVOICES} invoices (${indexNames.length} indexes dropped in the baseline):`);
const cases: Array<[string, InvoiceCriteria]> = [
  ['default page (issue_date desc)', criteria({})],
  ['sorted by amount_gross, page 20 of 50', criteria({ sortBy: 'amount_gross', sortDir: 'asc', perPage: 50, page: 20 })],
  ['statuses=overdue, last 90 days', criteria({ statuses: ['overdue'], dateFilter: { field: 'issue_date', range: { from: Date.UTC(2026, 7, 1) / 1000, toExclusive: Date.UTC(2026, 10, 1) / 1000 } } })],
  ['customer_vats exact', criteria({ customerVats: ['pl0000000031'] })],
];
for (const [name, query] of cases) {
  await compare(`  ${name}`, { name: 'no indexes', run: () => withoutIndexes.list(query) }, { name: 'indexed', run: () => withIndexes.list(query) }, ROUNDS);
}
await Promise.all([indexed.destroy(), bare.destroy()]);
await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
