import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultInvoiceCriteria, INVOICE_SORT_FIELDS, type InvoiceCriteria } from '@logi/domain';
import { KnexInvoiceRepository, loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { generatedInvoices } from '../support/invoice-generator.js';
import { openTestDatabase, type TestDatabase } from './knex-test-databases.js';

/**
 * Query plans on MariaDB with a few thousand invoices: every sort field of a
 * tenant's page is read from an index in order (no filesort), and the total
 * is counted from an index. Checked with EXPLAIN, not by guess.
 */
const DIRECTORY = 'plans-haulage';
let db: TestDatabase;
let repository: KnexInvoiceRepository;

beforeAll(async () => {
  db = await openTestDatabase('mariadb', 'plans');
  await loadFixtures(db.knex, generatedInvoices(4000, DIRECTORY), { hasher: new Sha256ApiKeyHasher() });
  await db.knex.raw('ANALYZE TABLE invoices, invoice_orders, invoice_items');
  repository = new KnexInvoiceRepository(db.knex);
}, 120_000);
afterAll(async () => {
  await db?.drop();
});

interface PlanRow {
  table: string | null;
  key: string | null;
  Extra: string | null;
  type: string | null;
}

/** EXPLAIN of each statement the repository sends for one list call. */
async function plans(criteria: InvoiceCriteria): Promise<Array<{ sql: string; rows: PlanRow[] }>> {
  const { queries: statements } = await countQueriesWithBindings(db.knex, () => repository.list(criteria));
  const out = [];
  for (const statement of statements.filter((s) => /from `invoices`/i.test(s.sql))) {
    const [rows] = (await db.knex.raw(`EXPLAIN ${statement.sql}`, statement.bindings as never)) as unknown as [PlanRow[]];
    out.push({ sql: statement.sql, rows });
  }
  return out;
}

const invoiceRow = (rows: PlanRow[]) => rows.find((row) => row.table === 'i' || row.table === 'invoices')!;

describe('invoice list query plans on MariaDB', () => {
  it.each(INVOICE_SORT_FIELDS.flatMap((field) => (['asc', 'desc'] as const).map((dir) => [field, dir] as const)))(
    'when sorted by %s %s, then the page is read from an index without a filesort',
    async (sortBy, sortDir) => {
      const statements = await plans({ ...defaultInvoiceCriteria(DIRECTORY), sortBy, sortDir, perPage: 50, page: 3 });
      const page = statements.find((s) => /order by/i.test(s.sql))!;
      expect(page).toBeDefined();
      const row = invoiceRow(page.rows);
      expect(row.key ?? '').toMatch(/^invoices_directory_/);
      expect(row.Extra ?? '').not.toMatch(/filesort/i);
    },
  );

  it('when only type, status and branch filters apply, then the total is summed from the kept counts, not counted over invoices', async () => {
    const { queries } = await countQueriesWithBindings(db.knex, () =>
      repository.list({ ...defaultInvoiceCriteria(DIRECTORY), statuses: ['overdue'], types: ['s', 'c'] }),
    );
    expect(queries.filter((q) => /count\(/i.test(q.sql))).toEqual([]);
    expect(queries.filter((q) => /from `invoice_counts`/i.test(q.sql))).toHaveLength(1);
  });

  it('when the total needs the invoices (a date range), then it is counted from an index of the tenant', async () => {
    const range = { from: Date.UTC(2026, 3, 1) / 1000, toExclusive: Date.UTC(2026, 6, 1) / 1000 };
    const statements = await plans({ ...defaultInvoiceCriteria(DIRECTORY), dateFilter: { field: 'issue_date', range } });
    const count = statements.find((s) => /count\(/i.test(s.sql))!;
    const row = invoiceRow(count.rows);
    expect(row.key ?? '').toMatch(/^invoices_directory_/);
    expect(row.type).not.toBe('ALL');
  });

  it('when filtered by one VAT and sorted by the default issue date, then the page is read in order from the VAT index (no filesort)', async () => {
    const statements = await plans({ ...defaultInvoiceCriteria(DIRECTORY), customerVats: ['PL0000000031'], perPage: 5 });
    const page = statements.find((s) => /order by/i.test(s.sql))!;
    const row = invoiceRow(page.rows);
    expect(row.key).toBe('invoices_directory_customer_vat_index');
    expect(row.Extra ?? '').not.toMatch(/filesort/i);
  });

  it('when a search leaves a few candidates, then the page reads them by primary key instead of walking a sort index', async () => {
    // `/2026/0012` is in the nrs of invoices 1200..1299 and 12 (a hundred or so of 4,000).
    const statements = await plans({ ...defaultInvoiceCriteria(DIRECTORY), search: '/2026/0012', perPage: 50 });
    const page = statements.find((s) => /order by/i.test(s.sql))!;
    expect(page.sql).toMatch(/force index \(primary\)/i);
    expect(invoiceRow(page.rows).key).toBe('PRIMARY');
  });

  it('when a page far from the start is asked for, then its ids are read from the index alone and the other end when nearer', async () => {
    const total = 3600; // nine in ten of the generated invoices are in the directory
    const criteria = { ...defaultInvoiceCriteria(DIRECTORY), sortBy: 'amount_gross' as const, sortDir: 'asc' as const, perPage: 50 };
    const last = await plans({ ...criteria, page: total / 50 });
    const ids = last.find((s) => /order by/i.test(s.sql))!;
    // The last page of an ascending sort is the first of the descending one.
    expect(ids.sql).toMatch(/order by `?i`?\.`?amount_gross`? desc/i);
    expect(ids.sql).toMatch(/^select `i`\.`id` from/i);
    const row = invoiceRow(ids.rows);
    expect(row.key).toBe('invoices_directory_amount_gross_index');
    expect(row.Extra ?? '').toMatch(/using index/i);
  });
});

describe('invoice list query plans on SQLite', () => {
  let sqlite: TestDatabase;
  let sqliteRepository: KnexInvoiceRepository;
  beforeAll(async () => {
    sqlite = await openTestDatabase('sqlite', 'plans');
    await loadFixtures(sqlite.knex, generatedInvoices(4000, DIRECTORY), { hasher: new Sha256ApiKeyHasher() });
    await sqlite.knex.raw('ANALYZE');
    sqliteRepository = new KnexInvoiceRepository(sqlite.knex);
  }, 120_000);
  afterAll(async () => {
    await sqlite?.drop();
  });

  async function sqlitePlan(criteria: InvoiceCriteria): Promise<string> {
    const { queries } = await countQueriesWithBindings(sqlite.knex, () => sqliteRepository.list(criteria));
    const page = queries.find((q) => /order by/i.test(q.sql))!;
    const rows = await sqlite.knex.raw<Array<{ detail: string }>>(`EXPLAIN QUERY PLAN ${page.sql}`, page.bindings as never);
    return rows.map((row) => row.detail).join('\n');
  }

  it('when filtered by VAT, then the folded VAT index is searched', async () => {
    expect(await sqlitePlan({ ...defaultInvoiceCriteria(DIRECTORY), customerVats: ['pl0000000031'] })).toMatch(/invoices_directory_vat_folded_index/);
  });

  it.each(['nr', 'customer_name'] as const)('when sorted by %s, then the sort-key index gives the order (no temp b-tree)', async (sortBy) => {
    const plan = await sqlitePlan({ ...defaultInvoiceCriteria(DIRECTORY), sortBy, sortDir: 'asc', perPage: 50 });
    expect(plan).toMatch(new RegExp(`invoices_directory_${sortBy}_sortkey_index`));
    expect(plan).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
  });
});

async function countQueriesWithBindings<T>(knex: TestDatabase['knex'], work: () => Promise<T>) {
  const queries: Array<{ sql: string; bindings: unknown[] }> = [];
  const listener = (query: { sql: string; bindings?: unknown[] }) => queries.push({ sql: query.sql, bindings: query.bindings ?? [] });
  knex.on('query', listener);
  try {
    return { result: await work(), queries };
  } finally {
    knex.off('query', listener);
  }
}
