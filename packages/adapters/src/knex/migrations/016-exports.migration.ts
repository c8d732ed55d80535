import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * Exports: each row is both the client's export and its place in the work queue. A runner claims a queued row (or a
 * running one whose lease ran out: its worker died) by raising `attempt`; the archive of an attempt is stored under a
 * key of its own and named in `archive_key` only when the row is marked succeeded
 * (docs/contribute/decisions/0041-exports.md).
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  const table = mysql ? 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci' : '';
  const id = mysql ? 'BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT';
  const directory = mysql ? 'VARCHAR(128) COLLATE utf8mb4_bin NOT NULL' : 'VARCHAR(128) NOT NULL';
  const text = mysql ? 'MEDIUMTEXT' : 'TEXT';
  await knex.raw(
    `CREATE TABLE exports (
      id ${id},
      directory ${directory},
      status VARCHAR(16) NOT NULL,
      created BIGINT NOT NULL,
      started BIGINT NULL,
      finished BIGINT NULL,
      filters ${text} NOT NULL,
      documents VARCHAR(64) NOT NULL,
      lang VARCHAR(8) NOT NULL,
      duplicate ${mysql ? 'TINYINT' : 'INTEGER'} NOT NULL,
      csv ${mysql ? 'TINYINT' : 'INTEGER'} NOT NULL,
      total INTEGER NULL,
      done INTEGER NOT NULL DEFAULT 0,
      events_cursor BIGINT NOT NULL,
      size BIGINT NULL,
      sha256 CHAR(64) NULL,
      expires BIGINT NULL,
      error VARCHAR(1024) NULL,
      attempt INTEGER NOT NULL DEFAULT 0,
      lease_until BIGINT NULL,
      archive_key VARCHAR(255) NULL
    ) ${table}`,
  );
  // A directory's exports newest first, and how many are queued or running (the 429).
  await knex.raw('CREATE INDEX exports_directory_id_index ON exports (directory, id)');
  // Runners find claimable rows; housekeeping finds expired ones.
  await knex.raw('CREATE INDEX exports_status_id_index ON exports (status, id)');
  await knex.raw('CREATE INDEX exports_expires_index ON exports (expires)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('exports');
}
