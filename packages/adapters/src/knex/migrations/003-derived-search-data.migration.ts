import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';
import { rebuildDerivedData } from '../search/derived-data.js';

/**
 * What the service derives to stay fast at millions of rows (the trigram index, `search_pending`, `invoice_counts`,
 * `directory_versions`), kept by triggers whoever writes (docs/contribute/decisions/0022-trigram-search-index.md).
 */
export const MYSQL_TRIGGERS: Record<string, string> = {
  invoices_derived_ai: `AFTER INSERT ON invoices FOR EACH ROW BEGIN
    INSERT INTO invoice_counts (directory, type, status, branch_id, customer_country, n) VALUES (NEW.directory, NEW.type, NEW.status, NEW.branch_id, NEW.customer_country, 1) ON DUPLICATE KEY UPDATE n = n + 1;
    INSERT INTO directory_versions (directory, version) VALUES (NEW.directory, 1) ON DUPLICATE KEY UPDATE version = version + 1;
    INSERT IGNORE INTO search_pending (kind, entity_id) VALUES (1, NEW.id), (2, NEW.id);
  END`,
  invoices_derived_au: `AFTER UPDATE ON invoices FOR EACH ROW BEGIN
    IF NOT (BINARY OLD.directory <=> BINARY NEW.directory AND BINARY OLD.type <=> BINARY NEW.type AND BINARY OLD.status <=> BINARY NEW.status AND OLD.branch_id <=> NEW.branch_id
        AND BINARY OLD.customer_country <=> BINARY NEW.customer_country) THEN
      UPDATE invoice_counts SET n = n - 1 WHERE directory = OLD.directory AND type = OLD.type AND status = OLD.status AND branch_id = OLD.branch_id AND customer_country = OLD.customer_country;
      INSERT INTO invoice_counts (directory, type, status, branch_id, customer_country, n) VALUES (NEW.directory, NEW.type, NEW.status, NEW.branch_id, NEW.customer_country, 1) ON DUPLICATE KEY UPDATE n = n + 1;
    END IF;
    INSERT INTO directory_versions (directory, version) VALUES (NEW.directory, 1) ON DUPLICATE KEY UPDATE version = version + 1;
    IF NOT (BINARY OLD.directory <=> BINARY NEW.directory) THEN
      UPDATE directory_versions SET version = version + 1 WHERE directory = OLD.directory;
    END IF;
    IF NOT (BINARY OLD.directory <=> BINARY NEW.directory AND BINARY OLD.nr <=> BINARY NEW.nr AND BINARY OLD.customer_name <=> BINARY NEW.customer_name) THEN
      INSERT IGNORE INTO search_pending (kind, entity_id) VALUES (1, NEW.id), (2, NEW.id);
    END IF;
  END`,
  invoices_derived_ad: `AFTER DELETE ON invoices FOR EACH ROW BEGIN
    UPDATE invoice_counts SET n = n - 1 WHERE directory = OLD.directory AND type = OLD.type AND status = OLD.status AND branch_id = OLD.branch_id AND customer_country = OLD.customer_country;
    UPDATE directory_versions SET version = version + 1 WHERE directory = OLD.directory;
  END`,
  orders_derived_ai: `AFTER INSERT ON orders FOR EACH ROW INSERT IGNORE INTO search_pending (kind, entity_id) VALUES (3, NEW.id)`,
  orders_derived_au: `AFTER UPDATE ON orders FOR EACH ROW BEGIN
    IF NOT (BINARY OLD.directory <=> BINARY NEW.directory AND BINARY OLD.nr <=> BINARY NEW.nr) THEN
      INSERT IGNORE INTO search_pending (kind, entity_id) VALUES (3, NEW.id);
    END IF;
  END`,
};

/** The related rows of an invoice: a change marks the invoice for the index and bumps its directory's version. */
for (const table of ['invoice_orders', 'invoice_items']) {
  for (const [suffix, event, row] of [
    ['ai', 'INSERT', 'NEW'],
    ['au', 'UPDATE', 'NEW'],
    ['ad', 'DELETE', 'OLD'],
  ] as const) {
    MYSQL_TRIGGERS[`${table}_derived_${suffix}`] = `AFTER ${event} ON ${table} FOR EACH ROW BEGIN
    INSERT IGNORE INTO search_pending (kind, entity_id) VALUES (1, ${row}.invoice_id);
    UPDATE directory_versions SET version = version + 1 WHERE directory = (SELECT directory FROM invoices WHERE id = ${row}.invoice_id);
  END`;
  }
}

const SQLITE_COUNT_UP = (row: string) =>
  `INSERT INTO invoice_counts (directory, type, status, branch_id, customer_country, n) VALUES (${row}.directory, ${row}.type, ${row}.status, ${row}.branch_id, ${row}.customer_country, 1) ` +
  `ON CONFLICT (directory, type, status, branch_id, customer_country) DO UPDATE SET n = n + 1;`;
const SQLITE_COUNT_DOWN = (row: string) =>
  `UPDATE invoice_counts SET n = n - 1 WHERE directory = ${row}.directory AND type = ${row}.type AND status = ${row}.status AND branch_id = ${row}.branch_id ` +
  `AND customer_country = ${row}.customer_country;`;
const SQLITE_BUMP = (row: string) =>
  `INSERT INTO directory_versions (directory, version) VALUES (${row}.directory, 1) ON CONFLICT (directory) DO UPDATE SET version = version + 1;`;

const SQLITE_TRIGGERS: Record<string, string> = {
  invoices_derived_ai: `AFTER INSERT ON invoices BEGIN
    ${SQLITE_COUNT_UP('NEW')}
    ${SQLITE_BUMP('NEW')}
    INSERT OR IGNORE INTO search_pending (kind, entity_id) VALUES (1, NEW.id), (2, NEW.id);
  END`,
  invoices_counts_au: `AFTER UPDATE ON invoices
    WHEN OLD.directory IS NOT NEW.directory OR OLD.type IS NOT NEW.type OR OLD.status IS NOT NEW.status OR OLD.branch_id IS NOT NEW.branch_id
      OR OLD.customer_country IS NOT NEW.customer_country BEGIN
    ${SQLITE_COUNT_DOWN('OLD')}
    ${SQLITE_COUNT_UP('NEW')}
    ${SQLITE_BUMP('OLD')}
  END`,
  invoices_version_au: `AFTER UPDATE ON invoices BEGIN
    ${SQLITE_BUMP('NEW')}
  END`,
  invoices_pending_au: `AFTER UPDATE ON invoices
    WHEN OLD.directory IS NOT NEW.directory OR OLD.nr IS NOT NEW.nr OR OLD.customer_name IS NOT NEW.customer_name BEGIN
    INSERT OR IGNORE INTO search_pending (kind, entity_id) VALUES (1, NEW.id), (2, NEW.id);
  END`,
  invoices_derived_ad: `AFTER DELETE ON invoices BEGIN
    ${SQLITE_COUNT_DOWN('OLD')}
    UPDATE directory_versions SET version = version + 1 WHERE directory = OLD.directory;
  END`,
  orders_derived_ai: `AFTER INSERT ON orders BEGIN
    INSERT OR IGNORE INTO search_pending (kind, entity_id) VALUES (3, NEW.id);
  END`,
  orders_derived_au: `AFTER UPDATE ON orders WHEN OLD.directory IS NOT NEW.directory OR OLD.nr IS NOT NEW.nr BEGIN
    INSERT OR IGNORE INTO search_pending (kind, entity_id) VALUES (3, NEW.id);
  END`,
};
for (const table of ['invoice_orders', 'invoice_items']) {
  for (const [suffix, event, row] of [
    ['ai', 'INSERT', 'NEW'],
    ['au', 'UPDATE', 'NEW'],
    ['ad', 'DELETE', 'OLD'],
  ] as const) {
    SQLITE_TRIGGERS[`${table}_derived_${suffix}`] = `AFTER ${event} ON ${table} BEGIN
    INSERT OR IGNORE INTO search_pending (kind, entity_id) VALUES (1, ${row}.invoice_id);
    UPDATE directory_versions SET version = version + 1 WHERE directory = (SELECT directory FROM invoices WHERE id = ${row}.invoice_id);
  END`;
  }
}

/** SQLite matches an exact order nr through ufold, which the plain column index cannot serve. */
const SQLITE_ORDER_NR_INDEX = 'orders_directory_nr_folded_index';

export async function up(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  const table = mysql ? 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci' : '';
  const directory = mysql ? 'VARCHAR(128) COLLATE utf8mb4_bin NOT NULL' : 'VARCHAR(128) NOT NULL';
  await knex.raw(
    mysql
      ? `CREATE TABLE search_trigrams (code BIGINT UNSIGNED NOT NULL, doc INT UNSIGNED NOT NULL, PRIMARY KEY (code, doc)) ${table}`
      : 'CREATE TABLE search_trigrams (code INTEGER NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY (code, doc)) WITHOUT ROWID',
  );
  await knex.raw(
    mysql
      ? `CREATE TABLE search_pending (kind TINYINT UNSIGNED NOT NULL, entity_id INT UNSIGNED NOT NULL, PRIMARY KEY (kind, entity_id)) ${table}`
      : 'CREATE TABLE search_pending (kind INTEGER NOT NULL, entity_id INTEGER NOT NULL, PRIMARY KEY (kind, entity_id)) WITHOUT ROWID',
  );
  await knex.raw(
    `CREATE TABLE invoice_counts (directory ${directory}, type VARCHAR(1) NOT NULL, status VARCHAR(16) NOT NULL, branch_id INTEGER NOT NULL, ` +
      `customer_country VARCHAR(2) NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (directory, type, status, branch_id, customer_country)) ${table}`,
  );
  await knex.raw(`CREATE TABLE directory_versions (directory ${directory}, version BIGINT NOT NULL, PRIMARY KEY (directory)) ${table}`);
  for (const [name, body] of Object.entries(mysql ? MYSQL_TRIGGERS : SQLITE_TRIGGERS)) await knex.raw(`CREATE TRIGGER ${name} ${body}`);
  if (!mysql) await knex.raw(`CREATE INDEX IF NOT EXISTS ${SQLITE_ORDER_NR_INDEX} ON orders (directory, ufold(nr), id)`);
  await rebuildDerivedData(knex);
}

export async function down(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  for (const name of Object.keys(mysql ? MYSQL_TRIGGERS : SQLITE_TRIGGERS)) await knex.raw(`DROP TRIGGER IF EXISTS ${name}`);
  if (!mysql) await knex.raw(`DROP INDEX IF EXISTS ${SQLITE_ORDER_NR_INDEX}`);
  for (const name of ['search_trigrams', 'search_pending', 'invoice_counts', 'directory_versions']) await knex.schema.dropTableIfExists(name);
}
