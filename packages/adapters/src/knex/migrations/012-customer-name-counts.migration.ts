import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';
import { rebuildCustomerNameCounts } from '../search/derived-data.js';

/**
 * Invoices per directory and customer name, kept by triggers byte for byte, so a `customer_name` total sums a few
 * thousand rows instead of testing every invoice (docs/contribute/decisions/0023-kept-customer-name-counts.md).
 */
const MYSQL_TRIGGERS: Record<string, string> = {
  invoices_name_counts_ai: `AFTER INSERT ON invoices FOR EACH ROW
    INSERT INTO customer_name_counts (directory, customer_name, n) VALUES (NEW.directory, NEW.customer_name, 1) ON DUPLICATE KEY UPDATE n = n + 1`,
  invoices_name_counts_au: `AFTER UPDATE ON invoices FOR EACH ROW BEGIN
    IF NOT (BINARY OLD.directory <=> BINARY NEW.directory AND BINARY OLD.customer_name <=> BINARY NEW.customer_name) THEN
      UPDATE customer_name_counts SET n = n - 1 WHERE directory = OLD.directory AND customer_name = OLD.customer_name;
      INSERT INTO customer_name_counts (directory, customer_name, n) VALUES (NEW.directory, NEW.customer_name, 1) ON DUPLICATE KEY UPDATE n = n + 1;
    END IF;
  END`,
  invoices_name_counts_ad: `AFTER DELETE ON invoices FOR EACH ROW
    UPDATE customer_name_counts SET n = n - 1 WHERE directory = OLD.directory AND customer_name = OLD.customer_name`,
};

const SQLITE_UP = (row: string) =>
  `INSERT INTO customer_name_counts (directory, customer_name, n) VALUES (${row}.directory, ${row}.customer_name, 1) ON CONFLICT (directory, customer_name) DO UPDATE SET n = n + 1;`;
const SQLITE_DOWN = (row: string) => `UPDATE customer_name_counts SET n = n - 1 WHERE directory = ${row}.directory AND customer_name = ${row}.customer_name;`;

const SQLITE_TRIGGERS: Record<string, string> = {
  invoices_name_counts_ai: `AFTER INSERT ON invoices BEGIN ${SQLITE_UP('NEW')} END`,
  invoices_name_counts_au: `AFTER UPDATE ON invoices WHEN OLD.directory IS NOT NEW.directory OR OLD.customer_name IS NOT NEW.customer_name BEGIN
    ${SQLITE_DOWN('OLD')}
    ${SQLITE_UP('NEW')}
  END`,
  invoices_name_counts_ad: `AFTER DELETE ON invoices BEGIN ${SQLITE_DOWN('OLD')} END`,
};

export async function up(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  await knex.raw(
    mysql
      ? 'CREATE TABLE customer_name_counts (directory VARCHAR(128) COLLATE utf8mb4_bin NOT NULL, customer_name VARCHAR(255) COLLATE utf8mb4_bin NOT NULL, ' +
          'n BIGINT NOT NULL, PRIMARY KEY (directory, customer_name)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin'
      : 'CREATE TABLE customer_name_counts (directory VARCHAR(128) NOT NULL, customer_name VARCHAR(255) NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (directory, customer_name)) WITHOUT ROWID',
  );
  for (const [name, body] of Object.entries(mysql ? MYSQL_TRIGGERS : SQLITE_TRIGGERS)) await knex.raw(`CREATE TRIGGER ${name} ${body}`);
  await rebuildCustomerNameCounts(knex);
}

export async function down(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  for (const name of Object.keys(mysql ? MYSQL_TRIGGERS : SQLITE_TRIGGERS)) await knex.raw(`DROP TRIGGER IF EXISTS ${name}`);
  await knex.schema.dropTableIfExists('customer_name_counts');
}
