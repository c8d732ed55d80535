import type { Knex } from 'knex';
import * as initialSchema from './001-initial-schema.migration.js';

interface NamedMigration extends Knex.Migration {
  name: string;
}

/** Migrations live in code (not files found at run time), so tsx, bundles and Docker all see the same list. */
const MIGRATIONS: NamedMigration[] = [{ name: '001-initial-schema', up: initialSchema.up, down: initialSchema.down }];

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

/**
 * Brings the schema up to date; safe to run from several processes, knex's
 * lock table lets one run the migrations while the others wait or fail.
 * Returns the names of the migrations it ran.
 */
export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, names] = (await knex.migrate.latest(MIGRATION_CONFIG)) as [number, string[]];
  return names;
}

/** Drops every table of the schema (tests and `db:reset`-like tooling). */
export async function migrateRollbackAll(knex: Knex): Promise<void> {
  await knex.migrate.rollback(MIGRATION_CONFIG, true);
}
