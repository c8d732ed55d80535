import { describe, expect, it } from 'vitest';
import {
  decideInvoiceEvents,
  eventsOf,
  EventsCursorRestoredError,
  EventsExpiredError,
  firstIdAfterRestore,
  ListEventsUseCase,
  refuseLostCursor,
  RESTORE_ID_MARGIN,
  RESTORE_IDS_PER_SECOND,
  TooManyWaitingRequestsError,
  previousAttributes,
  ValidationError,
  type ChangeEvent,
  type EventFeedPort,
  type FeedRestore,
} from '@logi/domain';

const item = (overrides: Record<string, unknown> = {}) => ({
  id: 7,
  nr: 'FV/1',
  status: 'issued',
  paid: 0,
  orders: [{ type: 'FTL', nr: 'O-1', cmr: '', tasks: [], files: [], contacts: [] }],
  correct_of: null,
  ...overrides,
});

describe('decideInvoiceEvents', () => {
  it('when there was nothing and now is an item, then invoice.created with the item and no previous_attributes', () => {
    expect(decideInvoiceEvents(null, { directory: 'd', item: item() })).toEqual([{ directory: 'd', type: 'invoice.created', data: { object: item() } }]);
  });

  it('when fields changed, then invoice.updated names exactly those, with their values before; orders count as one field', () => {
    const before = { directory: 'd', item: item() };
    const now = {
      directory: 'd',
      item: item({ status: 'paid', paid: 10, orders: [{ type: 'FTL', nr: 'O-1', cmr: 'C', tasks: [], files: [], contacts: [] }] }),
    };
    expect(decideInvoiceEvents(before, now)).toEqual([
      { directory: 'd', type: 'invoice.updated', data: { object: now.item, previous_attributes: { status: 'issued', paid: 0, orders: item().orders } } },
    ]);
  });

  it('when nothing visible changed (nested values equal in content, keys in another order), then no event', () => {
    const before = { directory: 'd', item: item({ correct_of: { id: 1, nr: 'A' } }) };
    const now = { directory: 'd', item: { ...item(), correct_of: { nr: 'A', id: 1 } } };
    expect(decideInvoiceEvents(before, now)).toEqual([]);
  });

  it('when the invoice is gone, then invoice.deleted with id and nr only; when it never was, nothing', () => {
    expect(decideInvoiceEvents({ directory: 'd', item: item() }, null)).toEqual([
      { directory: 'd', type: 'invoice.deleted', data: { object: { id: 7, nr: 'FV/1' } } },
    ]);
    expect(decideInvoiceEvents(null, null)).toEqual([]);
  });

  it('when the invoice moved to another directory, then it is deleted in one and created in the other', () => {
    expect(decideInvoiceEvents({ directory: 'a', item: item() }, { directory: 'b', item: item() }).map((draft) => [draft.directory, draft.type])).toEqual([
      ['a', 'invoice.deleted'],
      ['b', 'invoice.created'],
    ]);
  });

  it('when a field appears that was not there before, then its value before is null', () => {
    expect(previousAttributes({ id: 1 }, { id: 1, added: 5 })).toEqual({ added: null });
  });
});

describe('eventsOf an order file', () => {
  it('when the file row exists, then order.file_attached carries id, name, category_id and order_id; when it is gone, nothing', () => {
    expect(eventsOf({ kind: 'order_file', fileId: 3, file: { directory: 'd', id: 3, orderId: 9, name: 'cmr.pdf', categoryId: null } })).toEqual([
      { directory: 'd', type: 'order.file_attached', data: { object: { id: 3, name: 'cmr.pdf', category_id: null, order_id: 9 } } },
    ]);
    expect(eventsOf({ kind: 'order_file', fileId: 3, file: null })).toEqual([]);
  });
});

/** An in-memory feed: events in id order; `publish` adds one and wakes waiters, as the database-backed feed does. */
class FakeFeed implements EventFeedPort {
  events: Array<ChangeEvent & { directory: string }> = [];
  removed = 0;
  restores: FeedRestore[] = [];
  waits: Array<{ directory: string; after: number }> = [];
  private waiters: Array<{ directory: string; after: number; wake: () => void }> = [];

  async page(directory: string, after: number, limit: number, types: readonly string[]) {
    return this.events
      .filter((event) => event.directory === directory && event.id > after && (types.length === 0 || types.includes(event.type)))
      .slice(0, limit);
  }
  async latestId(directory: string) {
    return this.events.filter((event) => event.directory === directory).reduce((max, event) => Math.max(max, event.id), 0);
  }
  async cursorMarks() {
    return { removedThrough: this.removed, restores: this.restores };
  }
  waitForEvents(directory: string, after: number, ms: number, signal?: AbortSignal) {
    this.waits.push({ directory, after });
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      signal?.addEventListener('abort', wake, { once: true });
      this.waiters.push({ directory, after, wake });
    });
  }
  async removeExpired() {
    return 0;
  }
  publish(directory: string, type: ChangeEvent['type']) {
    const id = this.events.length + 1;
    this.events.push({ id, type, created: 1, data: { object: { id } }, directory });
    for (const waiter of this.waiters.splice(0)) if (waiter.directory === directory && id > waiter.after) waiter.wake();
    return id;
  }
}

const clock = { now: () => new Date() };

describe('ListEventsUseCase', () => {
  it('when more events are past after than the limit, then a page, has_more and next_after = the last id returned', async () => {
    const feed = new FakeFeed();
    for (let index = 0; index < 5; index += 1) feed.publish('d', 'invoice.created');
    const events = new ListEventsUseCase({ feed, clock, maxWaiting: 5 });
    const page = await events.execute({
      directory: 'd',
      query: [
        ['limit', '2'],
        ['after', '1'],
      ],
    });
    expect([page.events.map((event) => event.id), page.hasMore, page.nextAfter]).toEqual([[2, 3], true, 3]);
    const none = await events.execute({ directory: 'd', query: [['after', '5']] });
    expect([none.events, none.hasMore, none.nextAfter]).toEqual([[], false, 5]);
  });

  it('when retention removed events past after, then EventsExpiredError; at or past the removed id, pages as usual', async () => {
    const feed = new FakeFeed();
    feed.removed = 3;
    const events = new ListEventsUseCase({ feed, clock, maxWaiting: 5 });
    await expect(events.execute({ directory: 'd', query: [['after', '2']] })).rejects.toBeInstanceOf(EventsExpiredError);
    await expect(events.execute({ directory: 'd', query: [['after', '3']] })).resolves.toMatchObject({ events: [] });
  });

  it('when a restore is recorded, then a cursor inside its gap is EventsCursorRestoredError, one at or below its end or at or past its first new id pages', async () => {
    const feed = new FakeFeed();
    for (let index = 0; index < 3; index += 1) feed.publish('d', 'invoice.created');
    feed.restores = [{ restoredEnd: 2, firstNewId: 1_000 }];
    feed.events.push({ id: 1_000, type: 'invoice.created', created: 1, data: { object: { id: 1_000 } }, directory: 'd' });
    const events = new ListEventsUseCase({ feed, clock, maxWaiting: 5 });
    for (const after of ['3', '999']) {
      const refused = await events.execute({ directory: 'd', query: [['after', after]] }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(EventsCursorRestoredError);
      expect(refused).toMatchObject({ code: 'EVENTS_CURSOR_RESTORED', message: 'This cursor is from before a restore; resynchronise.' });
    }
    // A long poll is refused before it waits.
    await expect(
      events.execute({
        directory: 'd',
        query: [
          ['after', '500'],
          ['wait', '30'],
        ],
      }),
    ).rejects.toBeInstanceOf(EventsCursorRestoredError);
    expect(feed.waits).toEqual([]);
    expect((await events.execute({ directory: 'd', query: [['after', '1']] })).events.map((event) => event.id)).toEqual([2, 3, 1_000]);
    expect((await events.execute({ directory: 'd', query: [['after', '2']] })).events.map((event) => event.id)).toEqual([3, 1_000]);
    expect((await events.execute({ directory: 'd', query: [['after', '1000']] })).events).toEqual([]);
  });

  it('when a restore and retention both mark the feed, then each refuses its own cursors', () => {
    const marks = { removedThrough: 5, restores: [{ restoredEnd: 10, firstNewId: 100 }] };
    expect(() => refuseLostCursor(4, marks)).toThrow(EventsExpiredError);
    expect(() => refuseLostCursor(11, marks)).toThrow(EventsCursorRestoredError);
    expect(() => refuseLostCursor(5, marks)).not.toThrow();
    expect(() => refuseLostCursor(10, marks)).not.toThrow();
    expect(() => refuseLostCursor(100, marks)).not.toThrow();
  });

  it('when choosing the first id after a restore, then past the end by the margin, past the highest issued, past the clock, under 2^53', () => {
    expect(firstIdAfterRestore({ restoredEnd: 5, nowSeconds: 0 })).toBe(5 + RESTORE_ID_MARGIN);
    expect(firstIdAfterRestore({ restoredEnd: 5, highestIssued: 7_000_000_000, nowSeconds: 0 })).toBe(7_000_000_001);
    // Nov 2026: the clock's floor (a second restore of the same backup starts past the first one's new ids).
    expect(firstIdAfterRestore({ restoredEnd: 5, nowSeconds: 1_795_000_000 })).toBe(1_795_000_000 * RESTORE_IDS_PER_SECOND);
    expect(firstIdAfterRestore({ restoredEnd: 5, nowSeconds: 1_795_000_010 })).toBeGreaterThan(
      firstIdAfterRestore({ restoredEnd: 5, nowSeconds: 1_795_000_000 }),
    );
    expect(() => firstIdAfterRestore({ restoredEnd: Number.MAX_SAFE_INTEGER - 10, nowSeconds: 0 })).toThrow(RangeError);
  });

  it('when waiting with a types filter, then an event of another type does not end the wait and the next wait starts past it', async () => {
    const feed = new FakeFeed();
    const events = new ListEventsUseCase({ feed, clock, maxWaiting: 5 });
    const answer = events.execute({
      directory: 'd',
      query: [
        ['types', 'invoice.deleted'],
        ['wait', '5'],
      ],
    });
    await expect.poll(() => feed.waits.length).toBe(1);
    const other = feed.publish('d', 'invoice.created');
    await expect.poll(() => feed.waits.length).toBe(2);
    expect(feed.waits[1]).toEqual({ directory: 'd', after: other });
    const wanted = feed.publish('d', 'invoice.deleted');
    expect((await answer).events.map((event) => event.id)).toEqual([wanted]);
  });

  it('when the client goes away during a wait, then the answer comes at once with what there is', async () => {
    const feed = new FakeFeed();
    const gone = new AbortController();
    const answer = new ListEventsUseCase({ feed, clock, maxWaiting: 5 }).execute({ directory: 'd', query: [['wait', '30']], signal: gone.signal });
    await expect.poll(() => feed.waits.length).toBe(1);
    gone.abort();
    expect((await answer).events).toEqual([]);
  });

  it('when the directory already holds maxWaiting long polls, then one more is TooManyWaitingRequestsError; other directories and wait=0 are not held back', async () => {
    const feed = new FakeFeed();
    const events = new ListEventsUseCase({ feed, clock, maxWaiting: 2 });
    const gone = new AbortController();
    const waits = [1, 2].map(() => events.execute({ directory: 'd', query: [['wait', '30']], signal: gone.signal }));
    expect(events.waitingOf('d')).toBe(2);
    await expect(events.execute({ directory: 'd', query: [['wait', '1']] })).rejects.toBeInstanceOf(TooManyWaitingRequestsError);
    await expect(events.execute({ directory: 'd', query: [['wait', '0']] })).resolves.toMatchObject({ events: [] });
    const otherGone = new AbortController();
    const other = events.execute({ directory: 'e', query: [['wait', '30']], signal: otherGone.signal });
    expect(events.waitingOf('e')).toBe(1);
    gone.abort();
    await Promise.all(waits);
    expect(events.waitingOf('d')).toBe(0);
    otherGone.abort();
    await other;
    expect(events.waitingOf('e')).toBe(0);
  });

  it('when a long poll ends with an error, then its slot is given back', async () => {
    const feed = new FakeFeed();
    feed.removed = 3;
    const events = new ListEventsUseCase({ feed, clock, maxWaiting: 1 });
    await expect(
      events.execute({
        directory: 'd',
        query: [
          ['after', '1'],
          ['wait', '30'],
        ],
      }),
    ).rejects.toBeInstanceOf(EventsExpiredError);
    expect(events.waitingOf('d')).toBe(0);
    await expect(
      events.execute({
        directory: 'd',
        query: [
          ['after', '2'],
          ['wait', '30'],
        ],
      }),
    ).rejects.toBeInstanceOf(EventsExpiredError);
  });

  it.each([
    [[['after', '-1']], 'after'],
    [[['limit', '501']], 'limit'],
    [[['wait', '31']], 'wait'],
    [[['types', 'invoice.paid']], 'types'],
  ])('when the query is %j, then a validation error names %s', async (query, field) => {
    const error = await new ListEventsUseCase({ feed: new FakeFeed(), clock, maxWaiting: 5 })
      .execute({ directory: 'd', query: query as Array<[string, string]> })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(Object.keys((error as ValidationError).errors)).toEqual([field]);
  });
});
