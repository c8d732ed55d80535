import type { ClockPort } from '../../ports/clock.port.js';
import type { EventFeedPort } from '../../ports/event-feed.port.js';
import type { ChangeEvent } from '../event.js';
import { EventsExpiredError } from '../events.errors.js';
import { parseListEventsQuery } from './list-events.query.js';

export interface EventPage {
  events: ChangeEvent[];
  hasMore: boolean;
  /** The id of the last event returned, or the `after` sent when none was. */
  nextAfter: number;
}

/**
 * GET /events: validate the query, refuse a cursor retention has passed,
 * read one page; with `wait`, an empty page waits for the next event of the
 * directory (or the end of the wait, or the client leaving) and reads again.
 */
export class ListEventsUseCase {
  constructor(private readonly deps: { feed: EventFeedPort; clock: ClockPort }) {}

  async execute(input: { directory: string; query: Iterable<[string, string]>; signal?: AbortSignal }): Promise<EventPage> {
    const query = parseListEventsQuery(input.query);
    if ((await this.deps.feed.removedThrough(input.directory)) > query.after) throw new EventsExpiredError();
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
