import type { ClockPort } from '../../ports/clock.port.js';
import type { EventFeedPort } from '../../ports/event-feed.port.js';
import type { ChangeEvent } from '../event.js';
import { refuseLostCursor } from '../feed-cursor.js';
import { parseListEventsQuery, type ListEventsQuery } from './list-events.query.js';
import { WaitingSlots } from './waiting-slots.js';

export interface EventPage {
  events: ChangeEvent[];
  hasMore: boolean;
  /** The id of the last event returned, or the `after` sent when none was. */
  nextAfter: number;
}

/**
 * GET /events: validate the query, refuse a cursor retention has passed or
 * one from before a restore, read one page; with `wait`, an empty page waits for the next event of the
 * directory (or the end of the wait, or the client leaving) and reads again.
 * A request with `wait` holds one of the directory's `maxWaiting` slots of
 * this process until it ends, however it ends.
 */
export class ListEventsUseCase {
  private readonly waiting: WaitingSlots;

  constructor(private readonly deps: { feed: EventFeedPort; clock: ClockPort; maxWaiting: number }) {
    this.waiting = new WaitingSlots(deps.maxWaiting);
  }

  async execute(input: { directory: string; query: Iterable<[string, string]>; signal?: AbortSignal }): Promise<EventPage> {
    const query = parseListEventsQuery(input.query);
    const release = query.waitSeconds > 0 ? this.waiting.take(input.directory) : () => undefined;
    try {
      return await this.read(input.directory, query, input.signal);
    } finally {
      release();
    }
  }

  /** Long polls of the directory this process holds open now. */
  waitingOf(directory: string): number {
    return this.waiting.heldBy(directory);
  }

  private async read(directory: string, query: ListEventsQuery, signal: AbortSignal | undefined): Promise<EventPage> {
    const input = { directory, signal };
    refuseLostCursor(query.after, await this.deps.feed.cursorMarks(input.directory));
    const deadline = this.deps.clock.now().getTime() + query.waitSeconds * 1000;
    for (;;) {
      // With a types filter, events of other types past `after` must not wake this wait again and again.
      const seen = query.types.length > 0 && query.waitSeconds > 0 ? await this.deps.feed.latestId(input.directory) : query.after;
      const found = await this.deps.feed.page(input.directory, query.after, query.limit + 1, query.types);
      const left = deadline - this.deps.clock.now().getTime();
      if (found.length > 0 || left <= 0 || input.signal?.aborted) {
        const events = found.slice(0, query.limit);
        return { events, hasMore: found.length > query.limit, nextAfter: events.at(-1)?.id ?? query.after };
      }
      await this.deps.feed.waitForEvents(input.directory, Math.max(seen, query.after), left, input.signal);
    }
  }
}
