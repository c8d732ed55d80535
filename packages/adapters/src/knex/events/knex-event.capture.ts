import type { Knex } from 'knex';
import { endpointWants, type CapturedChange, type EventCapturePort, type EventDraft, type PublishedItem } from '@logi/domain';
import { firstAttempt } from '../webhooks/webhook-rows.js';
import { addPendingDeliveries } from '../webhooks/pending-deliveries.js';
import { isMysql } from '../sql-dialect.js';
import { IDS_PER_QUERY, loadListItems, PENDING_EXPORT, PENDING_FILE, PENDING_INVOICE, type LoadedItem } from './event-tables.js';
import { toExport } from '../exports/knex-export.repository.js';

/** Events per INSERT statement (their data is up to a few KiB each). */
const EVENTS_PER_INSERT = 100;

export interface KnexEventCaptureOptions {
  /** A captured invoice the list cannot show (a row another system wrote with an unknown status): its change is dropped, and said here. */
  onUnreadable?: (invoiceId: number, reason: string) => void;
  /**
   * After a batch is committed: how long each of its changes waited between the write that captured it and its
   * publication (seconds; changes captured by a release without the capture time are left out).
   */
  onPublished?: (lagsSeconds: number[]) => void;
  now?: () => number;
}

/**
 * The captured changes in `event_pending` turned into events by one publisher at a time, so ids are given and
 * committed in the order readers see (docs/contribute/decisions/0021-events-captured-by-triggers.md).
 */
export class KnexEventCapture implements EventCapturePort {
  private readonly mysql: boolean;

  constructor(
    private readonly knex: Knex,
    private readonly options: KnexEventCaptureOptions = {},
  ) {
    this.mysql = isMysql(knex);
  }

  async hasPending(): Promise<boolean> {
    return (await this.knex('event_pending').select('kind').limit(1)).length > 0;
  }

  async publishBatch(limit: number, decide: (change: CapturedChange) => EventDraft[]): Promise<{ changes: number; events: number }> {
    const work = async (trx: Knex.Transaction) => {
      await trx('event_publisher').where({ id: 1 }).increment('runs', 1);
      const pending = await this.claim(trx, limit);
      if (pending.length === 0) return { changes: 0, events: 0, capturedMs: [] };
      const invoiceIds = pending.filter((row) => row.kind === PENDING_INVOICE).map((row) => row.entityId);
      const fileIds = pending.filter((row) => row.kind === PENDING_FILE).map((row) => row.entityId);
      const exportIds = pending.filter((row) => row.kind === PENDING_EXPORT).map((row) => row.entityId);
      const drafts: EventDraft[] = [];
      for (const change of await this.exportChanges(trx, exportIds)) drafts.push(...decide(change));
      // Files first: an upload's event is not held behind a bulk load's invoices in the same batch.
      for (const change of await this.fileChanges(trx, fileIds)) drafts.push(...decide(change));
      const invoices = await this.invoiceChanges(trx, invoiceIds);
      // Corrections show the corrected invoice's nr: when it appears, changes or goes, they change too.
      const corrected = invoices.filter((change) => change.before?.item.nr !== change.now?.item.nr).map((change) => change.invoiceId);
      const correctors = await this.correctorsOf(trx, corrected, new Set(invoiceIds));
      const all = [...invoices, ...(await this.invoiceChanges(trx, correctors))];
      for (const change of all) drafts.push(...decide(change));
      await this.storeEvents(trx, drafts);
      await this.rememberPublished(trx, all);
      await this.forget(trx, pending);
      return { changes: pending.length, events: drafts.length, capturedMs: pending.flatMap((row) => (row.capturedMs === null ? [] : [row.capturedMs])) };
    };
    const { changes, events, capturedMs } = await (this.mysql
      ? this.knex.transaction(work, { isolationLevel: 'read committed' })
      : this.knex.transaction(work));
    if (capturedMs.length > 0 && this.options.onPublished) {
      // Visible to readers from the commit on: the lag ends here.
      const now = this.options.now?.() ?? Date.now();
      this.options.onPublished(capturedMs.map((ms) => Math.max(0, now - ms) / 1000));
    }
    return { changes, events };
  }

  /**
   * Files first (an upload's event is not held behind a bulk load's
   * invoices), then invoices, each a range of the primary key: no sort over
   * the whole table, however many changes wait.
   */
  private async claim(trx: Knex.Transaction, limit: number): Promise<Array<{ kind: number; entityId: number; capturedMs: number | null }>> {
    const claimed: Array<{ kind: number; entityId: number; capturedMs: number | null }> = [];
    for (const kind of [PENDING_EXPORT, PENDING_FILE, PENDING_INVOICE]) {
      const left = limit - claimed.length;
      if (left <= 0) break;
      const rows = (
        this.mysql
          ? (
              (await trx.raw('SELECT entity_id, captured_ms FROM event_pending WHERE kind = ? ORDER BY entity_id LIMIT ? FOR UPDATE SKIP LOCKED', [
                kind,
                left,
              ])) as unknown as [Array<{ entity_id: unknown; captured_ms: unknown }>]
            )[0]
          : await trx('event_pending').select('entity_id', 'captured_ms').where({ kind }).orderBy('entity_id').limit(left)
      ) as Array<{ entity_id: unknown; captured_ms: unknown }>;
      for (const row of rows) claimed.push({ kind, entityId: Number(row.entity_id), capturedMs: row.captured_ms == null ? null : Number(row.captured_ms) });
    }
    return claimed;
  }

  private async exportChanges(trx: Knex.Transaction, ids: number[]): Promise<CapturedChange[]> {
    const changes: CapturedChange[] = [];
    for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
      const chunk = ids.slice(start, start + IDS_PER_QUERY);
      const rows = (await trx('exports').whereIn('id', chunk)) as Array<Record<string, unknown>>;
      const byId = new Map(rows.map((row) => [Number(row.id), row]));
      for (const id of chunk) {
        const row = byId.get(id);
        changes.push({ kind: 'export', exportId: id, export: row ? toExport(row) : null });
      }
    }
    return changes;
  }

  private async fileChanges(trx: Knex.Transaction, ids: number[]): Promise<CapturedChange[]> {
    const changes: CapturedChange[] = [];
    for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
      const chunk = ids.slice(start, start + IDS_PER_QUERY);
      const rows = (await trx('order_files').select('id', 'directory', 'order_id', 'name', 'category_id').whereIn('id', chunk)) as Array<
        Record<string, unknown>
      >;
      const byId = new Map(rows.map((row) => [Number(row.id), row]));
      for (const id of chunk) {
        const row = byId.get(id);
        changes.push({
          kind: 'order_file',
          fileId: id,
          file: row
            ? {
                directory: String(row.directory),
                id,
                orderId: Number(row.order_id),
                name: String(row.name),
                categoryId: row.category_id == null ? null : Number(row.category_id),
              }
            : null,
        });
      }
    }
    return changes;
  }

  private async invoiceChanges(trx: Knex.Transaction, ids: number[]): Promise<Array<CapturedChange & { kind: 'invoice' }>> {
    const changes: Array<CapturedChange & { kind: 'invoice' }> = [];
    for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
      const chunk = ids.slice(start, start + IDS_PER_QUERY);
      const [snapshots, items] = await Promise.all([this.snapshotsOf(trx, chunk), loadListItems(trx, chunk)]);
      for (const id of chunk) {
        const now = items.get(id);
        if (now && !isReadable(now)) {
          this.options.onUnreadable?.(id, now.unreadable);
          continue;
        }
        changes.push({ kind: 'invoice', invoiceId: id, before: snapshots.get(id) ?? null, now: now ?? null });
      }
    }
    return changes;
  }

  private async snapshotsOf(trx: Knex.Transaction, ids: number[]): Promise<Map<number, PublishedItem>> {
    const rows = (await trx('event_snapshots').select('invoice_id', 'directory', 'item').whereIn('invoice_id', ids)) as Array<Record<string, unknown>>;
    return new Map(
      rows.map((row) => [Number(row.invoice_id), { directory: String(row.directory), item: JSON.parse(String(row.item)) as PublishedItem['item'] }]),
    );
  }

  private async correctorsOf(trx: Knex.Transaction, ids: number[], already: Set<number>): Promise<number[]> {
    const found = new Set<number>();
    for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
      const rows = (await trx('invoices')
        .select('id')
        .whereIn('correct_of_id', ids.slice(start, start + IDS_PER_QUERY))) as Array<{ id: unknown }>;
      for (const row of rows) if (!already.has(Number(row.id))) found.add(Number(row.id));
    }
    return [...found];
  }

  private async storeEvents(trx: Knex.Transaction, drafts: EventDraft[]): Promise<void> {
    if (drafts.length === 0) return;
    const created = Math.floor((this.options.now?.() ?? Date.now()) / 1000);
    const rows = drafts.map((draft) => ({ directory: draft.directory, type: draft.type, created, data: JSON.stringify(draft.data) }));
    const last = (await trx('events').max({ id: 'id' }).first()) as { id: unknown } | undefined;
    // In order: ids follow the order of the drafts.
    for (let start = 0; start < rows.length; start += EVENTS_PER_INSERT) await trx('events').insert(rows.slice(start, start + EVENTS_PER_INSERT));
    await this.scheduleDeliveries(trx, last?.id == null ? 0 : Number(last.id), created, [...new Set(drafts.map((draft) => draft.directory))]);
  }

  /**
   * The first attempt of each new event for each enabled endpoint that takes
   * it, in the same transaction as the event: no event is published without
   * its deliveries, whatever happens to a process or to Redis afterwards.
   */
  private async scheduleDeliveries(trx: Knex.Transaction, afterId: number, now: number, directories: string[]): Promise<void> {
    const endpoints = (await trx('webhook_endpoints').select('id', 'directory', 'event_types').where('enabled', 1).whereIn('directory', directories)) as Array<
      Record<string, unknown>
    >;
    if (endpoints.length === 0) return;
    const byDirectory = new Map<string, Array<{ id: number; types: string[] }>>();
    for (const row of endpoints) {
      const list = byDirectory.get(String(row.directory)) ?? [];
      list.push({ id: Number(row.id), types: JSON.parse(String(row.event_types)) as string[] });
      byDirectory.set(String(row.directory), list);
    }
    const events = (await trx('events').select('id', 'directory', 'type').where('id', '>', afterId).orderBy('id')) as Array<Record<string, unknown>>;
    const attempts = events.flatMap((event) =>
      (byDirectory.get(String(event.directory)) ?? [])
        .filter((endpoint) => endpointWants(endpoint.types, String(event.type)))
        .map((endpoint) => firstAttempt(endpoint.id, { id: Number(event.id), type: String(event.type) }, now)),
    );
    await addPendingDeliveries(trx, attempts);
  }

  private async rememberPublished(trx: Knex.Transaction, changes: Array<CapturedChange & { kind: 'invoice' }>): Promise<void> {
    // A write that changed nothing a client sees leaves the snapshot as it is.
    const kept = changes.filter((change) => change.now !== null && !samePublished(change.before, change.now));
    const gone = changes.filter((change) => change.now === null && change.before !== null).map((change) => change.invoiceId);
    for (let start = 0; start < kept.length; start += EVENTS_PER_INSERT) {
      const rows = kept
        .slice(start, start + EVENTS_PER_INSERT)
        .map((change) => ({ invoice_id: change.invoiceId, directory: change.now!.directory, item: JSON.stringify(change.now!.item) }));
      await trx('event_snapshots').insert(rows).onConflict('invoice_id').merge(['directory', 'item']);
    }
    for (let start = 0; start < gone.length; start += IDS_PER_QUERY)
      await trx('event_snapshots')
        .whereIn('invoice_id', gone.slice(start, start + IDS_PER_QUERY))
        .delete();
  }

  private async forget(trx: Knex.Transaction, pending: Array<{ kind: number; entityId: number }>): Promise<void> {
    for (const kind of [PENDING_INVOICE, PENDING_FILE, PENDING_EXPORT]) {
      const ids = pending.filter((row) => row.kind === kind).map((row) => row.entityId);
      for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
        await trx('event_pending')
          .where({ kind })
          .whereIn('entity_id', ids.slice(start, start + IDS_PER_QUERY))
          .delete();
      }
    }
  }
}

function samePublished(before: PublishedItem | null, now: PublishedItem): boolean {
  return before !== null && before.directory === now.directory && JSON.stringify(before.item) === JSON.stringify(now.item);
}

function isReadable(item: LoadedItem): item is PublishedItem {
  return 'item' in item;
}
