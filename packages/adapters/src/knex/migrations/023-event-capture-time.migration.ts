import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';
import { PENDING_FILE, PENDING_INVOICE } from '../events/event-tables.js';

/**
 * When each pending change was captured (Unix ms), so the publisher can measure the capture lag
 * (`logistics_event_capture_lag_seconds`). Expand only: a nullable column; a release before this one writes rows
 * without it (MariaDB fills it from its default, SQLite leaves it null and the lag of that change goes unmeasured).
 * A change already pending keeps its first time (`INSERT IGNORE`): the lag runs from the oldest write not yet published.
 */
const SQLITE_NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
const SQLITE_MARK = (kind: number, id: string, capturedMs: string | null) =>
  capturedMs === null
    ? `INSERT INTO event_pending (kind, entity_id) SELECT ${kind}, ${id} WHERE NOT EXISTS (SELECT 1 FROM event_pending WHERE kind = ${kind} AND entity_id = ${id});`
    : `INSERT INTO event_pending (kind, entity_id, captured_ms) SELECT ${kind}, ${id}, ${capturedMs} WHERE NOT EXISTS (SELECT 1 FROM event_pending WHERE kind = ${kind} AND entity_id = ${id});`;

/** Migration 008's SQLite triggers, with or without the capture time. */
function sqliteTriggers(capturedMs: string | null): Record<string, string> {
  const mark = (kind: number, id: string) => SQLITE_MARK(kind, id, capturedMs);
  return {
    invoices_events_ai: `AFTER INSERT ON invoices BEGIN ${mark(PENDING_INVOICE, 'NEW.id')} END`,
    invoices_events_au: `AFTER UPDATE ON invoices BEGIN ${mark(PENDING_INVOICE, 'NEW.id')} ${mark(PENDING_INVOICE, 'OLD.id')} END`,
    invoices_events_ad: `AFTER DELETE ON invoices BEGIN ${mark(PENDING_INVOICE, 'OLD.id')} END`,
    invoice_orders_events_ai: `AFTER INSERT ON invoice_orders BEGIN ${mark(PENDING_INVOICE, 'NEW.invoice_id')} END`,
    invoice_orders_events_au: `AFTER UPDATE ON invoice_orders BEGIN ${mark(PENDING_INVOICE, 'NEW.invoice_id')} ${mark(PENDING_INVOICE, 'OLD.invoice_id')} END`,
    invoice_orders_events_ad: `AFTER DELETE ON invoice_orders BEGIN ${mark(PENDING_INVOICE, 'OLD.invoice_id')} END`,
    order_files_events_ai: `AFTER INSERT ON order_files BEGIN ${mark(PENDING_FILE, 'NEW.id')} END`,
  };
}

async function replaceSqliteTriggers(knex: Knex, triggers: Record<string, string>): Promise<void> {
  for (const [name, body] of Object.entries(triggers)) {
    await knex.raw(`DROP TRIGGER IF EXISTS ${name}`);
    await knex.raw(`CREATE TRIGGER ${name} ${body}`);
  }
}

export async function up(knex: Knex): Promise<void> {
  if (isMysql(knex)) {
    // The triggers (migrations 008 and 013, ordered among themselves) stay as they are: the default fills the column.
    await knex.raw('ALTER TABLE event_pending ADD COLUMN captured_ms BIGINT NULL DEFAULT (FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000))');
    return;
  }
  // SQLite cannot add a column whose default is not a constant: its triggers write the time.
  await knex.raw('ALTER TABLE event_pending ADD COLUMN captured_ms INTEGER NULL');
  await replaceSqliteTriggers(knex, sqliteTriggers(SQLITE_NOW_MS));
}

export async function down(knex: Knex): Promise<void> {
  if (!isMysql(knex)) await replaceSqliteTriggers(knex, sqliteTriggers(null));
  await knex.raw('ALTER TABLE event_pending DROP COLUMN captured_ms');
}
