import type { Knex } from 'knex';
import { toInvoiceListItem, type PublishedItem } from '@logi/domain';
import { INVOICE_COLUMNS, INVOICE_ORDER_COLUMNS, toInvoice, toInvoiceOrder, type InvoiceOrderRow, type InvoiceRow } from '../mappers/invoice-row.mapper.js';

/** `event_pending.kind`: an invoice whose row or order rows were written; an order file row inserted. */
export const PENDING_INVOICE = 1;
export const PENDING_FILE = 2;
/** An export that finished (succeeded or failed): written by the export repository in the finishing transaction. */
export const PENDING_EXPORT = 3;

/** Ids per `IN (...)` list: well under SQLite's parameter limit. */
export const IDS_PER_QUERY = 500;

/** What a list item read for publishing is, or why it could not be read (a row another system wrote that the list cannot show). */
export type LoadedItem = PublishedItem | { unreadable: string };

/**
 * Invoices as the list shows them (the item and its directory), in two
 * queries: the rows with their corrected invoice, and their orders. A row
 * the list could not show either (an unknown status written by SQL) is
 * reported as unreadable instead of failing the others.
 */
export async function loadListItems(db: Knex, ids: readonly number[]): Promise<Map<number, LoadedItem>> {
  const items = new Map<number, LoadedItem>();
  if (ids.length === 0) return items;
  const [rows, orderRows] = await Promise.all([
    db('invoices as i')
      .leftJoin('invoices as ci', (join) => {
        join.on('ci.id', '=', 'i.correct_of_id').andOn('ci.directory', '=', 'i.directory');
      })
      .select([...INVOICE_COLUMNS.map((column) => `i.${column}`), 'ci.id as correct_of_ref_id', 'ci.nr as correct_of_nr'])
      .whereIn('i.id', ids) as Promise<InvoiceRow[]>,
    db('invoice_orders')
      .select(INVOICE_ORDER_COLUMNS)
      .whereIn('invoice_id', ids)
      .orderBy([{ column: 'invoice_id' }, { column: 'position' }]) as Promise<InvoiceOrderRow[]>,
  ]);
  const ordersOf = new Map<number, InvoiceOrderRow[]>();
  for (const row of orderRows) {
    const list = ordersOf.get(Number(row.invoice_id)) ?? [];
    list.push(row);
    ordersOf.set(Number(row.invoice_id), list);
  }
  for (const row of rows) {
    const id = Number(row.id);
    try {
      const invoice = toInvoice(row, (ordersOf.get(id) ?? []).map(toInvoiceOrder));
      items.set(id, { directory: invoice.directory, item: toInvoiceListItem(invoice) });
    } catch (error) {
      items.set(id, { unreadable: error instanceof Error ? error.message : String(error) });
    }
  }
  return items;
}

const SNAPSHOT_BATCH = 2_000;

/**
 * Remembers every invoice already in the database as published, a batch at
 * a time, so that the upgrade itself makes no events (about a minute per
 * million invoices on MariaDB; docs/operate/database-and-replicas.md#upgrading).
 */
export async function snapshotExistingInvoices(knex: Knex): Promise<number> {
  let after = 0;
  let total = 0;
  for (;;) {
    const ids = ((await knex('invoices').select('id').where('id', '>', after).orderBy('id').limit(SNAPSHOT_BATCH)) as Array<{ id: unknown }>).map((row) =>
      Number(row.id),
    );
    if (ids.length === 0) return total;
    const rows: Array<{ invoice_id: number; directory: string; item: string }> = [];
    for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
      const loaded = await loadListItems(knex, ids.slice(start, start + IDS_PER_QUERY));
      for (const [id, item] of loaded) if ('item' in item) rows.push({ invoice_id: id, directory: item.directory, item: JSON.stringify(item.item) });
    }
    for (let start = 0; start < rows.length; start += IDS_PER_QUERY) await knex('event_snapshots').insert(rows.slice(start, start + IDS_PER_QUERY));
    total += ids.length;
    after = ids.at(-1)!;
  }
}
