import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';
import * as initialSchema from './001-initial-schema.migration.js';
import * as sqliteFoldedIndexes from './002-sqlite-folded-indexes.migration.js';
import * as derivedSearchData from './003-derived-search-data.migration.js';
import * as coveringSortIndexes from './004-covering-sort-indexes.migration.js';
import * as idempotencyKeys from './005-idempotency-keys.migration.js';
import * as eInvoiceFields from './006-e-invoice-fields.migration.js';
import * as clientDataVersion from './007-client-data-version.migration.js';
import * as changeEvents from './008-change-events.migration.js';
import * as webhooks from './009-webhooks.migration.js';
import * as eventRetentionIndex from './010-event-retention-index.migration.js';
import * as vatSortIndex from './011-vat-sort-index.migration.js';
import * as customerNameCounts from './012-customer-name-counts.migration.js';
import * as directoryLockFirst from './013-directory-lock-first.migration.js';
import * as uploadQuotaUsage from './014-upload-quota-usage.migration.js';
import * as webhookFairClaims from './015-webhook-fair-claims.migration.js';
import * as exportsTable from './016-exports.migration.js';
import * as apiKeys from './017-api-keys.migration.js';
import * as webhookSecretsAtRest from './018-webhook-secrets-at-rest.migration.js';
import * as nationalEInvoiceFields from './019-national-e-invoice-fields.migration.js';
import * as exportFairClaims from './020-export-fair-claims.migration.js';
import * as webhookNextDue from './021-webhook-next-due.migration.js';
import * as feedRestores from './022-feed-restores.migration.js';
import * as eventCaptureTime from './023-event-capture-time.migration.js';

interface NamedMigration extends Knex.Migration {
  name: string;
  /** knex reads `config.transaction: false` to run a migration outside a transaction. */
  config?: { transaction?: boolean };
}

/** Migrations live in code (not files found at run time), so tsx, bundles and Docker all see the same list. */
const MIGRATIONS: NamedMigration[] = [
  { name: '001-initial-schema', up: initialSchema.up, down: initialSchema.down },
  { name: '002-sqlite-folded-indexes', up: sqliteFoldedIndexes.up, down: sqliteFoldedIndexes.down },
  // DDL and transactions of its own (the rebuild): MariaDB would commit an outer transaction midway anyway.
  { name: '003-derived-search-data', up: derivedSearchData.up, down: derivedSearchData.down, config: { transaction: false } },
  { name: '004-covering-sort-indexes', up: coveringSortIndexes.up, down: coveringSortIndexes.down },
  { name: '005-idempotency-keys', up: idempotencyKeys.up, down: idempotencyKeys.down },
  { name: '006-e-invoice-fields', up: eInvoiceFields.up, down: eInvoiceFields.down },
  { name: '007-client-data-version', up: clientDataVersion.up, down: clientDataVersion.down },
  // Snapshots every existing invoice in batches (minutes at millions): not one transaction.
  { name: '008-change-events', up: changeEvents.up, down: changeEvents.down, config: { transaction: false } },
  { name: '009-webhooks', up: webhooks.up, down: webhooks.down },
  { name: '010-event-retention-index', up: eventRetentionIndex.up, down: eventRetentionIndex.down },
  { name: '011-vat-sort-index', up: vatSortIndex.up, down: vatSortIndex.down },
  // Tables, triggers and a GROUP BY over every invoice: DDL commits on MariaDB anyway.
  { name: '012-customer-name-counts', up: customerNameCounts.up, down: customerNameCounts.down, config: { transaction: false } },
  // Triggers dropped and made again one by one: DDL commits on MariaDB anyway.
  { name: '013-directory-lock-first', up: directoryLockFirst.up, down: directoryLockFirst.down, config: { transaction: false } },
  { name: '014-upload-quota-usage', up: uploadQuotaUsage.up, down: uploadQuotaUsage.down },
  { name: '015-webhook-fair-claims', up: webhookFairClaims.up, down: webhookFairClaims.down },
  { name: '016-exports', up: exportsTable.up, down: exportsTable.down },
  { name: '017-api-keys', up: apiKeys.up, down: apiKeys.down },
  { name: '018-webhook-secrets-at-rest', up: webhookSecretsAtRest.up, down: webhookSecretsAtRest.down },
  { name: '019-national-e-invoice-fields', up: nationalEInvoiceFields.up, down: nationalEInvoiceFields.down },
  { name: '020-export-fair-claims', up: exportFairClaims.up, down: exportFairClaims.down },
  { name: '021-webhook-next-due', up: webhookNextDue.up, down: webhookNextDue.down },
  { name: '022-feed-restores', up: feedRestores.up, down: feedRestores.down },
  { name: '023-event-capture-time', up: eventCaptureTime.up, down: eventCaptureTime.down },
];

class InCodeMigrationSource implements Knex.MigrationSource<NamedMigration> {
  async getMigrations(): Promise<NamedMigration[]> {
    return MIGRATIONS;
  }
  getMigrationName(migration: NamedMigration): string {
    return migration.name;
  }
  async getMigration(migration: NamedMigration): Promise<Knex.Migration> {
    return migration;
  }
}

const MIGRATION_CONFIG: Knex.MigratorConfig = { migrationSource: new InCodeMigrationSource(), tableName: 'knex_migrations' };

/** How long a process waits for another one's migration before giving up (a crash can leave the lock set). */
const LOCK_WAIT_MS = 60_000;
const LOCK_POLL_MS = 250;

/**
 * Brings the schema up to date and returns the names of the migrations it
 * ran. Several processes may call it at once (API replicas, worker, CLI on one
 * DATA_DIR): knex lets one of them migrate and fails the others at once, so
 * those wait and try again, which then finds nothing left to do.
 */
export async function migrateLatest(knex: Knex): Promise<string[]> {
  if (isMysql(knex)) return withMysqlMigrationLock(knex, () => migrateWithRetries(knex));
  return migrateWithRetries(knex);
}

async function migrateWithRetries(knex: Knex): Promise<string[]> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const [, names] = (await knex.migrate.latest(MIGRATION_CONFIG)) as [number, string[]];
      return names;
    } catch (error) {
      if (!isConcurrentMigration(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    }
  }
}

/**
 * Another process holds the lock, created knex's own tables a moment before
 * this one, or held a table lock past the bounded wait (MariaDB DDL takes
 * metadata locks): all of them end well when tried again.
 */
function isConcurrentMigration(error: unknown): boolean {
  const { name, message } = error instanceof Error ? error : { name: '', message: String(error) };
  return name === 'MigrationLocked' || /already locked|already exists|lock wait timeout|deadlock found/i.test(message);
}

/** What knex's client (typed `any`) offers for holding one pooled connection. */
type PoolClient = { acquireConnection(): Promise<unknown>; releaseConnection(connection: unknown): Promise<void> };

/**
 * On MariaDB/MySQL, processes that migrate a new database at once could each
 * create knex's lock table and each add its row; with two rows knex then sees
 * the lock as taken forever. A server-side named lock lets one process at a
 * time in, and repairs a lock table left with extra rows by such a race.
 */
async function withMysqlMigrationLock<T>(knex: Knex, work: () => Promise<T>): Promise<T> {
  const connection: unknown = await (knex.client as PoolClient).acquireConnection();
  const onConnection = (sql: string, bindings: readonly unknown[] = []) => knex.raw(sql, bindings as never).connection(connection);
  try {
    const [rows] = (await onConnection('SELECT GET_LOCK(CONCAT(DATABASE(), ?), ?) AS locked', [':migrations', LOCK_WAIT_MS / 1000])) as unknown as [
      Array<{ locked: number | null }>,
    ];
    if (rows[0]?.locked !== 1) throw new Error('Another process kept the migration lock too long; try again.');
    try {
      const lockTable = `${MIGRATION_CONFIG.tableName}_lock`;
      if (await knex.schema.hasTable(lockTable)) {
        const first = (await knex(lockTable).min({ index: 'index' }).first()) as { index: number | null } | undefined;
        if (first?.index != null) await knex(lockTable).whereNot('index', first.index).delete();
      }
      return await work();
    } finally {
      await onConnection('SELECT RELEASE_LOCK(CONCAT(DATABASE(), ?))', [':migrations']);
    }
  } finally {
    await (knex.client as PoolClient).releaseConnection(connection);
  }
}

/** Drops every table of the schema (tests and `db:reset`-like tooling). */
export async function migrateRollbackAll(knex: Knex): Promise<void> {
  await knex.migrate.rollback(MIGRATION_CONFIG, true);
}

/**
 * Runs the pending migrations up to `last` included, as an earlier release
 * would have left the schema (tests of upgrades).
 */
export async function migrateUpTo(knex: Knex, last: string): Promise<void> {
  for (;;) {
    const [, pending] = (await knex.migrate.list(MIGRATION_CONFIG)) as [unknown[], NamedMigration[]];
    if (!pending[0] || pending[0].name > last) return;
    await knex.migrate.up(MIGRATION_CONFIG);
  }
}

/** The names of the migrations this release has and the database has not run yet. */
export async function pendingMigrations(knex: Knex): Promise<string[]> {
  const [, pending] = (await knex.migrate.list(MIGRATION_CONFIG)) as [unknown[], NamedMigration[]];
  return pending.map((migration) => migration.name);
}
