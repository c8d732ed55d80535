import type { EventDraft } from '../events/event.js';
import type { PublishedItem } from '../events/invoice-event.js';
import type { Export } from '../exports/export.js';

/** A committed change the database captured (triggers), with what the publisher needs to judge it. */
export type CapturedChange =
  | {
      kind: 'invoice';
      invoiceId: number;
      /** The list item last published for it (null: never published, or deleted). */
      before: PublishedItem | null;
      /** The list item now (null: the invoice is gone). */
      now: PublishedItem | null;
    }
  | {
      kind: 'order_file';
      fileId: number;
      /** The file row now (null: gone before it was published). */
      file: { directory: string; id: number; orderId: number; name: string; categoryId: number | null } | null;
    }
  | {
      kind: 'export';
      exportId: number;
      /** The export now (null: removed before it was published). */
      export: Export | null;
    };

/**
 * Where the database keeps changes captured in the writers' own
 * transactions (whoever wrote them) until they are published as events.
 */
export interface EventCapturePort {
  /**
   * Takes up to `limit` captured changes whose transactions committed and,
   * in one transaction with one publisher at a time across every process,
   * stores the events `decide` makes of them (ids in the order stored),
   * remembers each invoice's list item as published and forgets the
   * changes. Returns how many changes were taken and events stored.
   */
  publishBatch(limit: number, decide: (change: CapturedChange) => EventDraft[]): Promise<{ changes: number; events: number }>;
  /** Whether any captured change waits (cheap; no lock). */
  hasPending(): Promise<boolean>;
}
