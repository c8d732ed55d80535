import type { CapturedChange, EventCapturePort } from '../../ports/event-capture.port.js';
import type { EventDraft } from '../event.js';
import { decideInvoiceEvents } from '../invoice-event.js';
import { toExportObject } from '../../exports/export.js';

/**
 * Turns the changes the database captured into events, a batch at a time,
 * until none is left or the budget is spent. Any process may run it at any
 * moment: the capture lets one publisher in at a time, so ids grow in the
 * order readers see them.
 */
export class PublishEventsUseCase {
  /** Changes per transaction (500), and how long one run goes on (1 s) before other work of the process gets its turn. */
  constructor(private readonly deps: { capture: EventCapturePort; batchSize?: number; budgetMs?: number; now?: () => number }) {}

  /** `budgetSpent`: the run stopped on its time budget with changes perhaps left. */
  async execute(): Promise<{ changes: number; events: number; budgetSpent: boolean }> {
    const { batchSize = 500, budgetMs = 1_000 } = this.deps;
    const now = this.deps.now ?? Date.now;
    const started = now();
    const total = { changes: 0, events: 0, budgetSpent: false };
    if (!(await this.deps.capture.hasPending())) return total;
    for (;;) {
      const batch = await this.deps.capture.publishBatch(batchSize, eventsOf);
      total.changes += batch.changes;
      total.events += batch.events;
      if (batch.changes < batchSize) return total;
      if (now() - started >= budgetMs) return { ...total, budgetSpent: true };
    }
  }
}

/** What each kind of captured change makes: see decideInvoiceEvents; a stored file is attached once; an export that finished. */
export function eventsOf(change: CapturedChange): EventDraft[] {
  if (change.kind === 'invoice') return decideInvoiceEvents(change.before, change.now);
  if (change.kind === 'export') {
    const found = change.export;
    if (!found || (found.status !== 'succeeded' && found.status !== 'failed')) return [];
    return [{ directory: found.directory, type: found.status === 'succeeded' ? 'export.succeeded' : 'export.failed', data: { object: toExportObject(found) } }];
  }
  if (!change.file) return [];
  const { directory, id, name, categoryId, orderId } = change.file;
  return [{ directory, type: 'order.file_attached', data: { object: { id, name, category_id: categoryId, order_id: orderId } } }];
}
