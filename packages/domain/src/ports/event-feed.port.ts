import type { ChangeEvent, EventType } from '../events/event.js';
import type { CursorMarks } from '../events/feed-cursor.js';

/** The published events of every client directory, read by the feed. */
export interface EventFeedPort {
  /**
   * The directory's events with an id above `after`, oldest first, at most
   * `limit`, only of `types` (all types when empty). Ids only grow in the
   * order readers see them: a later call never finds a smaller id than an
   * earlier one returned.
   */
  page(directory: string, after: number, limit: number, types: readonly string[]): Promise<ChangeEvent[]>;
  /** The directory's newest event id (0 when none). */
  latestId(directory: string): Promise<number>;
  /**
   * Retention's mark of the directory and every recorded restore, read in
   * one round trip: the feed checks them on each page.
   */
  cursorMarks(directory: string): Promise<CursorMarks>;
  /**
   * Resolves once an event of the directory may have been published past
   * `after`, or after `ms`, or when `signal` aborts, whichever comes first.
   * May resolve early: callers read the page again.
   */
  waitForEvents(directory: string, after: number, ms: number, signal?: AbortSignal): Promise<void>;
  /** Removes up to `limit` events published before `createdBefore` (Unix seconds), oldest first; returns how many. */
  removeExpired(createdBefore: number, limit: number): Promise<number>;
}

export type { ChangeEvent, EventType };
