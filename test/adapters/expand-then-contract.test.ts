import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateLatest, migrateUpTo, pendingMigrations } from '@logi/adapters';
import { PREVIOUS_RELEASE } from '../support/releases.js';
import { expandOnlyViolations, snapshotColumns, type SchemaSnapshot } from '../support/schema-compatibility.js';
import { openTestDatabase, type TestDatabase } from './knex-test-databases.js';

/**
 * The rule of docs/contribute/decisions/0052-expand-then-contract-migrations.md, checked on the schema itself: the
 * migrations since the previous release only expand it, so that release's API and worker still run on it.
 */
describe(`migrations since ${PREVIOUS_RELEASE.version} (MariaDB schema diff)`, () => {
  let db: TestDatabase;
  let released: SchemaSnapshot;
  let latest: SchemaSnapshot;

  beforeAll(async () => {
    db = await openTestDatabase('mariadb', 'expand-contract', { migrate: false });
    await migrateUpTo(db.knex, PREVIOUS_RELEASE.lastMigration);
    released = await snapshotColumns(db.knex);
    await migrateLatest(db.knex);
    latest = await snapshotColumns(db.knex);
  }, 120_000);

  afterAll(async () => {
    await db?.drop();
  });

  it(`when the database is migrated to ${PREVIOUS_RELEASE.version}'s list and then to the latest, then every column of ${PREVIOUS_RELEASE.version} is still there with a compatible type and every new NOT NULL column has a default`, () => {
    expect(released.get('invoices.nr')).toMatchObject({ dataType: 'varchar' });
    expect(latest.size).toBeGreaterThanOrEqual(released.size);
    expect(expandOnlyViolations(released, latest)).toEqual([]);
  });

  it('when a migration dropped, renamed, narrowed or added a NOT NULL column without a default, then each is named', async () => {
    // The same DDL a careless migration would run, on this test's own database, then the same comparison.
    await db.knex.raw('ALTER TABLE orders DROP COLUMN ownnr');
    await db.knex.raw('ALTER TABLE invoices RENAME COLUMN customer_name TO buyer_name');
    await db.knex.raw('ALTER TABLE clients MODIFY name VARCHAR(10) NOT NULL');
    await db.knex.raw('ALTER TABLE invoice_items ADD COLUMN origin_country CHAR(2) NOT NULL');
    await db.knex.raw('ALTER TABLE invoice_items ADD COLUMN origin_note VARCHAR(50) NULL');
    await db.knex.raw('ALTER TABLE exports ADD COLUMN shard INT NOT NULL DEFAULT 0');
    await db.knex.raw('RENAME TABLE api_keys TO client_keys');
    const broken = expandOnlyViolations(released, await snapshotColumns(db.knex));
    expect(broken).toEqual(
      expect.arrayContaining([
        'orders.ownnr: column dropped or renamed',
        'invoices.customer_name: column dropped or renamed',
        'invoice_items.origin_country: added NOT NULL without a default to a table the previous release writes',
        'api_keys.id: table dropped or renamed',
      ]),
    );
    expect(broken.some((problem) => problem.startsWith('clients.name: narrowed'))).toBe(true);
    expect(broken.filter((problem) => problem.startsWith('invoice_items.origin_note') || problem.startsWith('exports.shard'))).toEqual([]);
    expect(await pendingMigrations(db.knex)).toEqual([]);
  });
});
