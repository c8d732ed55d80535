import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { insertInvoiceRow } from '../support/sql-writes.js';
import { openTestDatabase, type TestDatabase } from './knex-test-databases.js';

/**
 * Other systems write invoices straight into the database, several at once
 * (the contract allows it). The derived-data triggers must not make those
 * writers deadlock: each trigger of a directory's derived data takes that
 * directory's version row first (migration 013), so writers of a directory
 * queue there before any kept-count upsert. Before, the first invoices of a
 * new count key, inserted at once, deadlocked in `invoice_counts` (seen once
 * in a CI run, both transactions waiting for insert intention on the gap;
 * not reproduced on demand here, so the order of the triggers' statements is
 * checked too). Each round uses a new count key just before an existing one
 * and a new customer name, and no transaction may be refused.
 */
const DIRECTORY = 'lock-haulage';
const WRITERS = 16;
const ROUNDS = 40;
let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase('mariadb', 'lockorder');
  await loadFixtures(
    db.knex,
    {
      clients: [{ directory: DIRECTORY, api_key: 'lock-key', company: { name: 'B', address: 'A', vat: 'V', bank_account: 'X', bank_name: 'Y' } }],
      file_categories: [],
      orders: [],
      invoices: [],
    },
    { hasher: new Sha256ApiKeyHasher() },
  );
}, 60_000);
afterAll(async () => {
  await db?.drop();
});

describe('derived-data triggers under concurrent writers (MariaDB)', () => {
  it('when a new client is made, then its directory has its version row at once', async () => {
    await db.knex('clients').insert({
      directory: 'lock-new-client',
      name: 'New client',
      api_key_hash: 'h'.repeat(64),
      company_name: 'B',
      company_address: 'A',
      company_vat: 'V',
      company_bank_account: 'X',
      company_bank_name: 'Y',
      created_at: 1_763_800_000,
      updated_at: 1_763_800_000,
    });
    expect(await db.knex('directory_versions').where({ directory: 'lock-new-client' }).count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it('when writers insert the first invoices of new count keys at once, each with its order rows, then none is refused and the kept counts are exact', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const branch = 100 + round;
      const name = `Concurrent Cargo ${round}`;
      // A count key just after the new one, so the new key's gap lies before a record (as in the CI run).
      await insertInvoiceRow(db.knex, 89_000 + round, DIRECTORY, `ERP/TR/${round}`, {
        branch_id: branch,
        status: 'semipaid',
        customer_country: 'tr',
        customer_name: `${name} TR`,
      });
      const outcomes = await Promise.allSettled(
        Array.from({ length: WRITERS }, (_, writer) => {
          const id = 90_000 + round * 100 + writer;
          return db.knex.transaction(async (trx) => {
            await insertInvoiceRow(trx, id, DIRECTORY, `ERP/${id}`, { branch_id: branch, customer_name: name, status: 'semipaid' });
            await trx('invoice_orders').insert({
              invoice_id: id,
              position: 0,
              type: 'FTL',
              nr: `ERP/${id}/O`,
              cmr: '',
              tasks: '[]',
              files: '[]',
              contacts: '[]',
            });
          });
        }),
      );
      const refused = outcomes.flatMap((outcome) =>
        outcome.status === 'rejected' ? [String((outcome.reason as { code?: unknown }).code ?? outcome.reason)] : [],
      );
      expect({ round, refused }).toEqual({ round, refused: [] });
      const counts = await db.knex('invoice_counts').select('n').where({ directory: DIRECTORY, branch_id: branch, status: 'semipaid', customer_country: 'pl' });
      expect(counts.map((row) => Number((row as { n: unknown }).n))).toEqual([WRITERS]);
      const names = await db.knex('customer_name_counts').select('n').where({ directory: DIRECTORY, customer_name: name });
      expect(names.map((row) => Number((row as { n: unknown }).n))).toEqual([WRITERS]);
    }
  }, 120_000);

  it("when the derived-data triggers of invoices and their rows are read, then each runs first for its event and its first statement takes the directory's version row", async () => {
    const [rows] = (await db.knex.raw(
      "SELECT trigger_name AS name, action_order AS o, action_statement AS body FROM information_schema.triggers WHERE trigger_schema = DATABASE() AND trigger_name LIKE '%\\_derived\\_%' AND event_object_table IN ('invoices', 'invoice_orders', 'invoice_items') ORDER BY name",
    )) as unknown as [Array<{ name: string; o: number; body: string }>];
    expect(rows.map((row) => row.name)).toHaveLength(9);
    for (const row of rows) {
      const first = row.body.replace(/^\s*BEGIN\s*/i, '').split(';')[0]!;
      expect({ name: row.name, order: Number(row.o), first: /directory_versions/.test(first) }).toEqual({ name: row.name, order: 1, first: true });
    }
  });
});
