import { EventsCursorRestoredError, EventsExpiredError } from './events.errors.js';

/**
 * One `pnpm cli db:after-restore`: the feed a backup gave back ended at
 * `restoredEnd`, and new events start at `firstNewId`. Ids between the two
 * may have been issued before the loss and seen by clients.
 */
export interface FeedRestore {
  restoredEnd: number;
  firstNewId: number;
}

/** What decides whether the feed can go on from a cursor: retention's mark of the directory and every restore. */
export interface CursorMarks {
  /** The highest id of the directory's events that retention removed; 0 when none was. */
  removedThrough: number;
  restores: readonly FeedRestore[];
}

/**
 * Refuses a cursor the feed cannot go on from: one inside a restore's gap
 * (it passed events the restore lost) or one that retention passed. A
 * cursor at or below a restored end, or at or past the first new id, goes on.
 */
export function refuseLostCursor(after: number, marks: CursorMarks): void {
  if (marks.restores.some((restore) => after > restore.restoredEnd && after < restore.firstNewId)) throw new EventsCursorRestoredError();
  if (marks.removedThrough > after) throw new EventsExpiredError();
}

/** Ids skipped after a restore when the operator does not know the highest id issued before the loss. */
export const RESTORE_ID_MARGIN = 1_000_000_000;
/** The clock's floor: ids per second of wall time that the feed could never have issued (ADR 0051). */
export const RESTORE_IDS_PER_SECOND = 1_000_000;

/**
 * The first id new events take after a restore: past the restored end by
 * the margin (or past the highest id the operator knows was issued), and
 * past the clock's floor, so that restoring the same backup a second time,
 * after new events were served, never gives their ids again. Stays under
 * 2^53 (JavaScript clients parse ids as numbers) until the year 2255.
 */
export function firstIdAfterRestore(input: { restoredEnd: number; highestIssued?: number; nowSeconds: number }): number {
  const past = Math.max(input.restoredEnd + RESTORE_ID_MARGIN, (input.highestIssued ?? 0) + 1);
  const first = Math.max(past, Math.floor(input.nowSeconds) * RESTORE_IDS_PER_SECOND);
  if (!Number.isSafeInteger(first)) throw new RangeError(`The first id after the restore (${first}) is past 2^53.`);
  return first;
}
