import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex, migrateLatest } from '@logi/adapters';
import { openTestDatabase, type TestDatabase } from './knex-test-databases.js';

const TABLES = [
  'clients',
  'file_categories',
  'orders',
  'order_files',
  'invoices',
  'invoice_orders',
  'invoice_items',
  'search_trigrams',
  'search_pending',
  'invoice_counts',
  'directory_versions',
  'idempotency_keys',
  'upload_quota_usage',
  'api_keys',
  'webhook_private_targets',
  'exports',
  'feed_restores',
];

describe('migrateLatest', () => {
  const opened: Knex[] = [];
  let dataDir: string | null = null;
  let mariadb: TestDatabase | null = null;

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((k) => k.destroy()));
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    dataDir = null;
  });

  afterAll(async () => {
    await mariadb?.drop();
  });

  it('when several processes migrate one SQLite file at once, then one runs the migration and all succeed', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-migrate-'));
    const connections = Array.from({ length: 4 }, () => createKnex({ databaseUrl: null, dataDir: dataDir! }));
    opened.push(...connections);
    const results = await Promise.all(connections.map((k) => migrateLatest(k)));
    expect(results.flat()).toEqual([
      '001-initial-schema',
      '002-sqlite-folded-indexes',
      '003-derived-search-data',
      '004-covering-sort-indexes',
      '005-idempotency-keys',
      '006-e-invoice-fields',
      '007-client-data-version',
      '008-change-events',
      '009-webhooks',
      '010-event-retention-index',
      '011-vat-sort-index',
      '012-customer-name-counts',
      '013-directory-lock-first',
      '014-upload-quota-usage',
      '015-webhook-fair-claims',
      '016-exports',
      '017-api-keys',
      '018-webhook-secrets-at-rest',
      '019-national-e-invoice-fields',
      '020-export-fair-claims',
      '021-webhook-next-due',
      '022-feed-restores',
      '023-event-capture-time',
    ]);
    for (const table of TABLES) expect(await connections[0]!.schema.hasTable(table)).toBe(true);
    expect(await connections[0]!.raw('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
    expect(await connections[0]!.raw('PRAGMA foreign_keys')).toEqual([{ foreign_keys: 1 }]);
  });

  it('when several connections migrate a MariaDB database at once, then all succeed with InnoDB utf8mb4_unicode_ci tables', async () => {
    mariadb = await openTestDatabase('mariadb', 'migrate', { migrate: false });
    const connections = Array.from({ length: 3 }, () => createKnex({ databaseUrl: mariadb!.databaseUrl, dataDir: mariadb!.dataDir }));
    opened.push(...connections);
    const results = await Promise.all(connections.map((k) => migrateLatest(k)));
    expect(results.flat()).toEqual([
      '001-initial-schema',
      '002-sqlite-folded-indexes',
      '003-derived-search-data',
      '004-covering-sort-indexes',
      '005-idempotency-keys',
      '006-e-invoice-fields',
      '007-client-data-version',
      '008-change-events',
      '009-webhooks',
      '010-event-retention-index',
      '011-vat-sort-index',
      '012-customer-name-counts',
      '013-directory-lock-first',
      '014-upload-quota-usage',
      '015-webhook-fair-claims',
      '016-exports',
      '017-api-keys',
      '018-webhook-secrets-at-rest',
      '019-national-e-invoice-fields',
      '020-export-fair-claims',
      '021-webhook-next-due',
      '022-feed-restores',
      '023-event-capture-time',
    ]);
    const [rows] = (await mariadb.knex.raw(
      'SELECT TABLE_NAME AS name, ENGINE AS engine, TABLE_COLLATION AS collation FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?) ORDER BY TABLE_NAME',
      [TABLES],
    )) as unknown as [Array<{ name: string; engine: string; collation: string }>];
    expect(rows).toHaveLength(TABLES.length);
    for (const row of rows) expect(row).toMatchObject({ engine: 'InnoDB', collation: 'utf8mb4_unicode_ci' });
  });

  it('when a MariaDB lock table was left with two rows by an earlier race, then the next migration repairs it instead of waiting forever', async () => {
    const repaired = await openTestDatabase('mariadb', 'migrate-repair', { migrate: false });
    try {
      await migrateLatest(repaired.knex);
      await repaired.knex('knex_migrations_lock').insert({ is_locked: 0 });
      expect(await repaired.knex('knex_migrations_lock').count({ n: '*' })).toEqual([{ n: 2 }]);
      expect(await migrateLatest(repaired.knex)).toEqual([]);
      expect(await repaired.knex('knex_migrations_lock').count({ n: '*' })).toEqual([{ n: 1 }]);
    } finally {
      await repaired.drop();
    }
  });
});
