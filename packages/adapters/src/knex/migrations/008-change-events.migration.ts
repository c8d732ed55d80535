import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';
import { PENDING_FILE, PENDING_INVOICE, snapshotExistingInvoices } from '../events/event-tables.js';

/**
 * Events captured by triggers in the writers' own transactions, whoever writes, and numbered by one publisher
 * (docs/contribute/decisions/0021-events-captured-by-triggers.md).
 */
const MYSQL_TRIGGERS: Record<string, string> = {
  invoices_events_ai: `AFTER INSERT ON invoices FOR EACH ROW INSERT IGNORE INTO event_pending (kind, entity_id) VALUES (${PENDING_INVOICE}, NEW.id)`,
  invoices_events_au: `AFTER UPDATE ON invoices FOR EACH ROW INSERT IGNORE INTO event_pending (kind, entity_id) VALUES (${PENDING_INVOICE}, NEW.id), (${PENDING_INVOICE}, OLD.id)`,
  invoices_events_ad: `AFTER DELETE ON invoices FOR EACH ROW INSERT IGNORE INTO event_pending (kind, entity_id) VALUES (${PENDING_INVOICE}, OLD.id)`,
  invoice_orders_events_ai: `AFTER INSERT ON invoice_orders FOR EACH ROW INSERT IGNORE INTO event_pending (kind, entity_id) VALUES (${PENDING_INVOICE}, NEW.invoice_id)`,
  invoice_orders_events_au: `AFTER UPDATE ON invoice_orders FOR EACH ROW INSERT IGNORE INTO event_pending (kind, entity_id) VALUES (${PENDING_INVOICE}, NEW.invoice_id), (${PENDING_INVOICE}, OLD.invoice_id)`,
  invoice_orders_events_ad: `AFTER DELETE ON invoice_orders FOR EACH ROW INSERT IGNORE INTO event_pending (kind, entity_id) VALUES (${PENDING_INVOICE}, OLD.invoice_id)`,
  order_files_events_ai: `AFTER INSERT ON order_files FOR EACH ROW INSERT IGNORE INTO event_pending (kind, entity_id) VALUES (${PENDING_FILE}, NEW.id)`,
};

/**
 * SQLite: not `INSERT OR IGNORE`, whose policy an outer upsert's (the fixtures
 * loader's `ON CONFLICT ... DO UPDATE`) overrides, failing on a row already
 * pending.
 */
const SQLITE_MARK = (kind: number, id: string) =>
  `INSERT INTO event_pending (kind, entity_id) SELECT ${kind}, ${id} WHERE NOT EXISTS (SELECT 1 FROM event_pending WHERE kind = ${kind} AND entity_id = ${id});`;
const SQLITE_TRIGGERS: Record<string, string> = {
  invoices_events_ai: `AFTER INSERT ON invoices BEGIN ${SQLITE_MARK(PENDING_INVOICE, 'NEW.id')} END`,
  invoices_events_au: `AFTER UPDATE ON invoices BEGIN ${SQLITE_MARK(PENDING_INVOICE, 'NEW.id')} ${SQLITE_MARK(PENDING_INVOICE, 'OLD.id')} END`,
  invoices_events_ad: `AFTER DELETE ON invoices BEGIN ${SQLITE_MARK(PENDING_INVOICE, 'OLD.id')} END`,
  invoice_orders_events_ai: `AFTER INSERT ON invoice_orders BEGIN ${SQLITE_MARK(PENDING_INVOICE, 'NEW.invoice_id')} END`,
  invoice_orders_events_au: `AFTER UPDATE ON invoice_orders BEGIN ${SQLITE_MARK(PENDING_INVOICE, 'NEW.invoice_id')} ${SQLITE_MARK(PENDING_INVOICE, 'OLD.invoice_id')} END`,
  invoice_orders_events_ad: `AFTER DELETE ON invoice_orders BEGIN ${SQLITE_MARK(PENDING_INVOICE, 'OLD.invoice_id')} END`,
  order_files_events_ai: `AFTER INSERT ON order_files BEGIN ${SQLITE_MARK(PENDING_FILE, 'NEW.id')} END`,
};

export async function up(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  const table = mysql ? 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci' : '';
  const directory = mysql ? 'VARCHAR(128) COLLATE utf8mb4_bin NOT NULL' : 'VARCHAR(128) NOT NULL';
  const text = mysql ? 'MEDIUMTEXT' : 'TEXT';
  // SQLite: AUTOINCREMENT, so an id removed by retention is never given again.
  const id = mysql ? 'BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT';
  await knex.raw(`CREATE TABLE events (id ${id}, directory ${directory}, type VARCHAR(32) NOT NULL, created BIGINT NOT NULL, data ${text} NOT NULL) ${table}`);
  await knex.raw('CREATE INDEX events_directory_id_index ON events (directory, id)');
  await knex.raw('CREATE INDEX events_directory_type_id_index ON events (directory, type, id)');
  await knex.raw(
    mysql
      ? `CREATE TABLE event_pending (kind TINYINT UNSIGNED NOT NULL, entity_id INT UNSIGNED NOT NULL, PRIMARY KEY (kind, entity_id)) ${table}`
      : 'CREATE TABLE event_pending (kind INTEGER NOT NULL, entity_id INTEGER NOT NULL, PRIMARY KEY (kind, entity_id)) WITHOUT ROWID',
  );
  await knex.raw(
    `CREATE TABLE event_snapshots (invoice_id ${mysql ? 'INT UNSIGNED' : 'INTEGER'} NOT NULL PRIMARY KEY, directory ${directory}, item ${text} NOT NULL) ${table}`,
  );
  await knex.raw(`CREATE TABLE event_publisher (id INTEGER NOT NULL PRIMARY KEY, runs BIGINT NOT NULL) ${table}`);
  await knex('event_publisher').insert({ id: 1, runs: 0 });
  await knex.raw(`CREATE TABLE event_retention (directory ${directory}, removed_through BIGINT NOT NULL, PRIMARY KEY (directory)) ${table}`);
  // The publisher finds the corrections of an invoice whose number changed, appeared or went away.
  await knex.raw('CREATE INDEX invoices_correct_of_index ON invoices (correct_of_id)');
  // Triggers first: a write during the snapshot is then either in it or captured.
  for (const [name, body] of Object.entries(mysql ? MYSQL_TRIGGERS : SQLITE_TRIGGERS)) await knex.raw(`CREATE TRIGGER ${name} ${body}`);
  await snapshotExistingInvoices(knex);
}

export async function down(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  for (const name of Object.keys(mysql ? MYSQL_TRIGGERS : SQLITE_TRIGGERS)) await knex.raw(`DROP TRIGGER IF EXISTS ${name}`);
  await knex.raw(mysql ? 'DROP INDEX invoices_correct_of_index ON invoices' : 'DROP INDEX IF EXISTS invoices_correct_of_index');
  for (const name of ['events', 'event_pending', 'event_snapshots', 'event_publisher', 'event_retention']) await knex.schema.dropTableIfExists(name);
}
