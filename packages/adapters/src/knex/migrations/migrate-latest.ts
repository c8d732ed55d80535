import type { Knex } from 'knex';
import * as initialSchema from './001-initial-schema.migration.js';
import * as sqliteFoldedIndexes from './002-sqlite-folded-indexes.migration.js';

interface NamedMigration extends Knex.Migration {
  name: string;
}

/** Migrations live in code (not files found at run time), so tsx, bundles and Docker all see the same list. */
const MIGRATIONS: NamedMigration[] = [
  { name: '001-initial-schema', up: initialSchema.up, down: initialSchema.down },
  { name: '002-sqlite-folded-indexes', up: sqliteFoldedIndexes.up, down: sqliteFoldedIndexes.down },
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

/** Another process holds the lock, or created knex's own tables a moment before this one. */
function isConcurrentMigration(error: unknown): boolean {
  const { name, message } = error instanceof Error ? error : { name: '', message: String(error) };
  return name === 'MigrationLocked' || /already locked|already exists/i.test(message);
}

/** Drops every table of the schema (tests and `db:reset`-like tooling). */
export async function migrateRollbackAll(knex: Knex): Promise<void> {
  await knex.migrate.rollback(MIGRATION_CONFIG, true);
}
