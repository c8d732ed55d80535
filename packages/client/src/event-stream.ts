import type { Event, EventPage, EventType, ListEventsQuery } from './schema.types.js';

export interface FollowEventsOptions {
  /** Start past this event id: the `cursor` saved last time (default 0, the oldest kept event). */
  after?: number;
  /** Only these types (all by default). */
  types?: EventType[];
  /** Seconds a request waits on the server when no event is there yet (long poll), 1 to 30 (default 30); anything else makes `follow` throw a RangeError. */
  wait?: number;
  /** Events per request, 1 to 500 (the server's default 100 when not given). */
  limit?: number;
  /** Ends the iteration: a waiting request is cancelled and the loop finishes normally. */
  signal?: AbortSignal;
}

/** Reads one page of the feed; rejects with an ApiError (an EventsExpiredError for 410). */
export type EventPageReader = (query: ListEventsQuery, signal: AbortSignal | undefined) => Promise<EventPage>;

/**
 * Every event past a cursor, in feed order, for as long as the caller
 * iterates: pages are asked for at once while the server says `has_more`,
 * otherwise with `wait` (a long poll), so a quiet feed costs one request per
 * `wait` seconds. Aborting `options.signal` ends the loop without an error;
 * any other failure (a 410 as `EventsExpiredError`, a 429/503 the client's
 * `retry` did not absorb) is thrown from the loop. One iteration per stream.
 *
 * `cursor` is the id of the last event handed out (`after` before the
 * first): save it once that event is processed, and pass it as `after` to
 * resume without missing or repeating an event.
 */
export class EventStream implements AsyncIterable<Event> {
  private position: number;
  private readonly iterator: AsyncGenerator<Event, void, undefined>;

  constructor(
    private readonly readPage: EventPageReader,
    private readonly options: FollowEventsOptions = {},
  ) {
    const wait = options.wait ?? 30;
    // A wait of 0 would make a quiet feed a busy loop of requests.
    if (!Number.isInteger(wait) || wait < 1 || wait > 30) throw new RangeError(`wait must be an integer from 1 to 30 seconds, not ${wait}`);
    this.position = options.after ?? 0;
    this.iterator = this.events(wait);
  }

  /** The id of the last event yielded: what to save, and to pass as `after` to resume. */
  get cursor(): number {
    return this.position;
  }

  [Symbol.asyncIterator](): AsyncGenerator<Event, void, undefined> {
    return this.iterator;
  }

  private async *events(wait: number): AsyncGenerator<Event, void, undefined> {
    const { types, limit, signal } = this.options;
    let hasMore = false;
    while (!signal?.aborted) {
      let page: EventPage;
      try {
        page = await this.readPage({ after: this.position, limit, types, wait: hasMore ? 0 : wait }, signal);
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
      for (const event of page.events) {
        if (signal?.aborted) return;
        this.position = event.id;
        yield event;
      }
      this.position = Math.max(this.position, page.next_after);
      hasMore = page.has_more;
    }
  }
}
