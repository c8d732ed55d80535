import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex, KnexInvoiceRepository, loadFixtures, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { defaultInvoiceCriteria, type InvoiceCriteria } from '@logi/domain';
import { pathToFileURL } from 'node:url';
import { compare, type BenchResult } from './bench-kit.js';
import { generatedInvoices } from '../support/invoice-generator.js';

/**
 * The invoice list on a tenant with many invoices (SQLite, the embedded
 * profile). Candidate: the schema as migrated, with an index per sort field.
 * Baseline: the same data with those indexes dropped. Both in this process.
 */
const DIRECTORY = 'bench-haulage';

const criteria = (overrides: Partial<InvoiceCriteria>): InvoiceCriteria => ({ ...defaultInvoiceCriteria(DIRECTORY), ...overrides });

async function database(dir: string): Promise<Knex> {
  const knex = createKnex({ databaseUrl: null, dataDir: dir });
  await migrateLatest(knex);
  return knex;
}

/** Runs the comparison; part `inprocess` of `pnpm bench`. */
export async function benchInvoiceList(
  invoices = Number(process.env.BENCH_INVOICES ?? 20_000),
  rounds = Number(process.env.BENCH_ROUNDS ?? 15),
): Promise<{ invoices: number; results: BenchResult[] }> {
  const dirs = await Promise.all([0, 1].map(() => mkdtemp(path.join(os.tmpdir(), 'logi-bench-'))));
  const [indexed, bare] = (await Promise.all(dirs.map(database))) as [Knex, Knex];
  const data = generatedInvoices(invoices, DIRECTORY);
  for (const knex of [indexed, bare]) await loadFixtures(knex, data, { hasher: new Sha256ApiKeyHasher() });
  const indexNames = await bare.raw<Array<{ name: string }>>(
    `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'invoices' AND name LIKE 'invoices_directory_%'`,
  );
  for (const { name } of indexNames) await bare.raw(`DROP INDEX "${name}"`);
  await bare.raw('ANALYZE');
  await indexed.raw('ANALYZE');

  const withIndexes = new KnexInvoiceRepository(indexed);
  const withoutIndexes = new KnexInvoiceRepository(bare);
  console.error(`invoice list, SQLite, ${invoices} invoices (${indexNames.length} indexes dropped in the baseline):`);
  const cases: Array<[string, InvoiceCriteria]> = [
    ['default page (issue_date desc)', criteria({})],
    ['sorted by amount_gross, page 20 of 50', criteria({ sortBy: 'amount_gross', sortDir: 'asc', perPage: 50, page: 20 })],
    [
      'statuses=overdue, last 90 days',
      criteria({
        statuses: ['overdue'],
        dateFilter: { field: 'issue_date', range: { from: Date.UTC(2026, 7, 1) / 1000, toExclusive: Date.UTC(2026, 10, 1) / 1000 } },
      }),
    ],
    ['customer_vats exact', criteria({ customerVats: ['pl0000000031'] })],
    ['sorted by customer_name, page 5', criteria({ sortBy: 'customer_name', sortDir: 'asc', perPage: 50, page: 5 })],
  ];
  const results: BenchResult[] = [];
  for (const [name, query] of cases) {
    results.push(
      await compare(
        `  ${name}`,
        { name: 'no indexes', run: () => withoutIndexes.list(query) },
        { name: 'indexed', run: () => withIndexes.list(query) },
        rounds,
      ),
    );
  }
  await Promise.all([indexed.destroy(), bare.destroy()]);
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  return { invoices, results };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await benchInvoiceList();
