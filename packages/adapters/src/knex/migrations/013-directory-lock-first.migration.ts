import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * Every derived-data trigger bumps its directory's version row first, so concurrent writers of one directory queue
 * on that lock instead of deadlocking on gap locks (docs/contribute/decisions/0025-directory-lock-first.md).
 */
const BUMP = (row: string) => `INSERT INTO directory_versions (directory, version) VALUES (${row}.directory, 1) ON DUPLICATE KEY UPDATE version = version + 1;`;
const BUMP_OF_INVOICE = (row: string) =>
  `UPDATE directory_versions SET version = version + 1 WHERE directory = (SELECT directory FROM invoices WHERE id = ${row}.invoice_id);`;

const TRIGGERS: Array<{ name: string; head: string; precedes?: string; body: string }> = [
  {
    name: 'invoices_derived_ai',
    head: 'AFTER INSERT ON invoices',
    precedes: 'invoices_events_ai',
    body: `${BUMP('NEW')}
    INSERT INTO invoice_counts (directory, type, status, branch_id, customer_country, n) VALUES (NEW.directory, NEW.type, NEW.status, NEW.branch_id, NEW.customer_country, 1) ON DUPLICATE KEY UPDATE n = n + 1;
    INSERT IGNORE INTO search_pending (kind, entity_id) VALUES (1, NEW.id), (2, NEW.id);`,
  },
  {
    name: 'invoices_derived_au',
    head: 'AFTER UPDATE ON invoices',
    precedes: 'invoices_events_au',
    body: `${BUMP('NEW')}
    IF NOT (BINARY OLD.directory <=> BINARY NEW.directory) THEN
      UPDATE directory_versions SET version = version + 1 WHERE directory = OLD.directory;
    END IF;
    IF NOT (BINARY OLD.directory <=> BINARY NEW.directory AND BINARY OLD.type <=> BINARY NEW.type AND BINARY OLD.status <=> BINARY NEW.status AND OLD.branch_id <=> NEW.branch_id
        AND BINARY OLD.customer_country <=> BINARY NEW.customer_country) THEN
      UPDATE invoice_counts SET n = n - 1 WHERE directory = OLD.directory AND type = OLD.type AND status = OLD.status AND branch_id = OLD.branch_id AND customer_country = OLD.customer_country;
      INSERT INTO invoice_counts (directory, type, status, branch_id, customer_country, n) VALUES (NEW.directory, NEW.type, NEW.status, NEW.branch_id, NEW.customer_country, 1) ON DUPLICATE KEY UPDATE n = n + 1;
    END IF;
    IF NOT (BINARY OLD.directory <=> BINARY NEW.directory AND BINARY OLD.nr <=> BINARY NEW.nr AND BINARY OLD.customer_name <=> BINARY NEW.customer_name) THEN
      INSERT IGNORE INTO search_pending (kind, entity_id) VALUES (1, NEW.id), (2, NEW.id);
    END IF;`,
  },
  {
    name: 'invoices_derived_ad',
    head: 'AFTER DELETE ON invoices',
    precedes: 'invoices_events_ad',
    body: `UPDATE directory_versions SET version = version + 1 WHERE directory = OLD.directory;
    UPDATE invoice_counts SET n = n - 1 WHERE directory = OLD.directory AND type = OLD.type AND status = OLD.status AND branch_id = OLD.branch_id AND customer_country = OLD.customer_country;`,
  },
];
for (const table of ['invoice_orders', 'invoice_items']) {
  for (const [suffix, event, row] of [
    ['ai', 'INSERT', 'NEW'],
    ['au', 'UPDATE', 'NEW'],
    ['ad', 'DELETE', 'OLD'],
  ] as const) {
    TRIGGERS.push({
      name: `${table}_derived_${suffix}`,
      head: `AFTER ${event} ON ${table}`,
      ...(table === 'invoice_orders' ? { precedes: `invoice_orders_events_${suffix}` } : {}),
      body: `${BUMP_OF_INVOICE(row)}
    INSERT IGNORE INTO search_pending (kind, entity_id) VALUES (1, ${row}.invoice_id);`,
    });
  }
}

/** Every client's directory has its version row from the start, so a bump never inserts one (an insert takes a gap lock). */
const CLIENT_VERSION_ROW = `CREATE TRIGGER clients_directory_version_ai AFTER INSERT ON clients FOR EACH ROW
  INSERT IGNORE INTO directory_versions (directory, version) VALUES (NEW.directory, 1)`;

export async function up(knex: Knex): Promise<void> {
  if (!isMysql(knex)) return;
  await knex.raw('INSERT IGNORE INTO directory_versions (directory, version) SELECT directory, 1 FROM clients');
  await knex.raw(CLIENT_VERSION_ROW);
  for (const trigger of TRIGGERS) await replaceTrigger(knex, trigger);
}

/** Drops a trigger and creates it again in the same place among its table's triggers for that event (before `precedes`). */
async function replaceTrigger(knex: Knex, trigger: { name: string; head: string; precedes?: string; body: string }): Promise<void> {
  await knex.raw(`DROP TRIGGER IF EXISTS ${trigger.name}`);
  const order = trigger.precedes && (await triggerExists(knex, trigger.precedes)) ? ` PRECEDES ${trigger.precedes}` : '';
  await knex.raw(`CREATE TRIGGER ${trigger.name} ${trigger.head} FOR EACH ROW${order} BEGIN
    ${trigger.body}
  END`);
}

async function triggerExists(knex: Knex, name: string): Promise<boolean> {
  const [rows] = (await knex.raw('SELECT 1 FROM information_schema.triggers WHERE trigger_schema = DATABASE() AND trigger_name = ?', [name])) as unknown as [
    unknown[],
  ];
  return rows.length > 0;
}

/** Back to migration 003's bodies (the counts first), in the same places; the version rows stay. */
export async function down(knex: Knex): Promise<void> {
  if (!isMysql(knex)) return;
  await knex.raw('DROP TRIGGER IF EXISTS clients_directory_version_ai');
  const { MYSQL_TRIGGERS } = await import('./003-derived-search-data.migration.js');
  for (const trigger of TRIGGERS) {
    await knex.raw(`DROP TRIGGER IF EXISTS ${trigger.name}`);
    const order = trigger.precedes && (await triggerExists(knex, trigger.precedes)) ? `FOR EACH ROW PRECEDES ${trigger.precedes}` : 'FOR EACH ROW';
    await knex.raw(`CREATE TRIGGER ${trigger.name} ${MYSQL_TRIGGERS[trigger.name]!.replace('FOR EACH ROW', order)}`);
  }
}
