import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultInvoiceCriteria, INVOICE_SORT_FIELDS, type InvoiceCriteria } from '@logi/domain';
import { KnexInvoiceRepository, loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { generatedInvoices } from '../support/invoice-generator.js';
import { countQueries, openTestDatabase, type TestDatabase } from './knex-test-databases.js';

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
  const statements: Array<{ sql: string; bindings: unknown[] }> = [];
  const listener = (query: { sql: string; bindings?: unknown[] }) => statements.push({ sql: query.sql, bindings: query.bindings ?? [] });
  db.knex.on('query', listener);
  try {
    await repository.list(criteria);
  } finally {
    db.knex.off('query', listener);
  }
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

  it('when the total is counted, then it is read from an index of the tenant', async () => {
    const statements = await plans({ ...defaultInvoiceCriteria(DIRECTORY), statuses: ['overdue'] });
    const count = statements.find((s) => /count\(/i.test(s.sql))!;
    const row = invoiceRow(count.rows);
    expect(row.key ?? '').toMatch(/^invoices_directory_/);
    expect(row.type).not.toBe('ALL');
  });
});
