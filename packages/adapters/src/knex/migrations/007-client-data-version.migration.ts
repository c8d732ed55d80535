import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * A change to a client's row (its company data is printed on every invoice
 * as the seller) bumps its directory's data version, as a change to an
 * invoice or its rows already does (migration 003): what a process
 * remembers of the PDFs it printed (RecentPdfs) is keyed by that version.
 */
const BUMP_MYSQL = `AFTER UPDATE ON clients FOR EACH ROW BEGIN
    INSERT INTO directory_versions (directory, version) VALUES (NEW.directory, 1) ON DUPLICATE KEY UPDATE version = version + 1;
    IF NOT (BINARY OLD.directory <=> BINARY NEW.directory) THEN
      UPDATE directory_versions SET version = version + 1 WHERE directory = OLD.directory;
    END IF;
  END`;
const BUMP_SQLITE = `AFTER UPDATE ON clients BEGIN
    INSERT INTO directory_versions (directory, version) VALUES (NEW.directory, 1) ON CONFLICT (directory) DO UPDATE SET version = version + 1;
    UPDATE directory_versions SET version = version + 1 WHERE directory = OLD.directory AND OLD.directory IS NOT NEW.directory;
  END`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TRIGGER clients_data_version_au ${isMysql(knex) ? BUMP_MYSQL : BUMP_SQLITE}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS clients_data_version_au');
}
