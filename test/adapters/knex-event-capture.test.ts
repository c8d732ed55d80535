import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventsOf, toInvoiceListItem, type ChangeEvent } from '@logi/domain';
import { KnexEventCapture, KnexEventFeed, KnexInvoiceRepository, loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture, SOUTH } from './knex-repository.fixture.js';
import { insertInvoiceRow } from '../support/sql-writes.js';

/**
 * Capture by triggers and publishing, on both profiles, with writes made
 * straight in SQL as another system would make them.
 */
describe.each(PROFILES)('event capture and feed on %s', (profile) => {
  let db: TestDatabase;
  let capture: KnexEventCapture;
  let feed: KnexEventFeed;
  const unreadable: number[] = [];

  /** Publishes everything captured so far; returns the events published by this call, in id order. */
  async function publish(): Promise<ChangeEvent[]> {
    const before = await lastId();
    for (;;) {
      const batch = await capture.publishBatch(50, eventsOf);
      if (batch.changes === 0) break;
    }
    return allEventsAfter(before);
  }

  async function lastId(): Promise<number> {
    const row = (await db.knex('events').max({ id: 'id' }).first()) as { id: unknown };
    return row.id == null ? 0 : Number(row.id);
  }

  async function allEventsAfter(after: number): Promise<ChangeEvent[]> {
    const rows = (await db.knex('events').select('id', 'type', 'created', 'data', 'directory').where('id', '>', after).orderBy('id')) as Array<
      Record<string, unknown>
    >;
    return rows.map(
      (row) =>
        ({ id: Number(row.id), type: row.type, created: Number(row.created), data: JSON.parse(String(row.data)), directory: row.directory }) as ChangeEvent,
    );
  }

  async function listItem(directory: string, id: number) {
    const invoices = new KnexInvoiceRepository(db.knex);
    const detail = await invoices.findDetail(directory, id);
    return toInvoiceListItem(detail!);
  }

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'events');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    capture = new KnexEventCapture(db.knex, { onUnreadable: (id) => unreadable.push(id) });
    feed = new KnexEventFeed(db.knex, { watchEveryMs: 50 });
  });

  afterAll(async () => {
    feed?.close();
    await db?.drop();
  });

  beforeEach(async () => {
    await publish();
  });

  it('when fixtures are loaded, then each invoice is created once with the list item as its object', async () => {
    const events = await feed.page(NORTH, 0, 500, ['invoice.created']);
    expect(events.map((event) => event.data.object.id)).toEqual([101, 102, 103, 104, 105, 106, 107]);
    expect(events[0]!.data.object).toEqual(await listItem(NORTH, 101));
    expect(events[0]!.data).not.toHaveProperty('previous_attributes');
    const all = await feed.page(NORTH, 0, 500, []);
    expect(all).toHaveLength(7);
  });

  it('when a status is set to paid by SQL, then one invoice.updated names the fields that changed with their values before', async () => {
    await db.knex('invoices').where({ id: 101 }).update({ status: 'paid', paid: 100, left_to_pay: 0 });
    const events = await publish();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'invoice.updated', data: { object: await listItem(NORTH, 101) } });
    expect(events[0]!.data.previous_attributes).toEqual({ status: 'issued', paid: 0, left_to_pay: 100 });
    expect((events[0] as ChangeEvent & { directory: string }).directory).toBe(NORTH);
  });

  it('when one transaction writes an invoice row and its order rows, then it makes one event, with orders as one field', async () => {
    const before = await listItem(NORTH, 102);
    await db.knex.transaction(async (trx) => {
      await trx('invoices').where({ id: 102 }).update({ customer_name: 'Alpha Transport AG' });
      await trx('invoice_orders').where({ invoice_id: 102, position: 0 }).update({ cmr: 'CMR-NEW' });
      await trx('invoice_orders').insert({ invoice_id: 102, position: 5, type: 'LTL', nr: 'ORD-B9', cmr: '', tasks: '[]', files: '[]', contacts: '[]' });
    });
    const events = await publish();
    expect(events.map((event) => event.type)).toEqual(['invoice.updated']);
    expect(events[0]!.data.previous_attributes).toEqual({ customer_name: before.customer_name, orders: before.orders });
    expect(events[0]!.data.object).toEqual(await listItem(NORTH, 102));
  });

  it('when a write leaves the list item unchanged (address, item rows, same values), then no event', async () => {
    await db.knex('invoices').where({ id: 104 }).update({ customer_address: 'Elsewhere 5' });
    await db.knex('invoices').where({ id: 104 }).update({ status: 'overdue' });
    await db.knex('invoice_items').where({ invoice_id: 104 }).update({ name: 'Customs 60%' });
    expect(await publish()).toEqual([]);
    expect(await db.knex('event_pending').count({ n: '*' })).toEqual([{ n: 0 }]);
  });

  it('when a transaction rolls back, then no event', async () => {
    await expect(
      db.knex.transaction(async (trx) => {
        await trx('invoices').where({ id: 105 }).update({ status: 'paid' });
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    expect(await publish()).toEqual([]);
  });

  it('when an invoice is deleted, then invoice.deleted carries its id and nr only', async () => {
    await db.knex('invoice_items').where({ invoice_id: 106 }).delete();
    await db.knex('invoice_orders').where({ invoice_id: 106 }).delete();
    await db.knex('invoices').where({ id: 106 }).delete();
    const events = await publish();
    expect(events.map((event) => [event.type, event.data])).toEqual([['invoice.deleted', { object: { id: 106, nr: 'FV%2026_004' } }]]);
  });

  it('when a corrected invoice gets another nr, then its correction is updated too (correct_of shows the nr)', async () => {
    await db.knex('invoices').where({ id: 201 }).update({ nr: 'FV/2026/001-R' });
    const events = await publish();
    expect(events.map((event) => [event.type, event.data.object.id, event.data.previous_attributes])).toEqual([
      ['invoice.updated', 201, { nr: 'FV/2026/001' }],
      ['invoice.updated', 202, { correct_of: { id: 201, nr: 'FV/2026/001' } }],
    ]);
    expect(events[1]!.data.object.correct_of).toEqual({ id: 201, nr: 'FV/2026/001-R' });
  });

  it('when an order file row is inserted, then order.file_attached carries the uploaded item and order_id', async () => {
    const [id] = await db.knex('order_files').insert({
      directory: NORTH,
      order_id: 12,
      category_id: 1,
      name: 'cmr ğ.pdf',
      size: 10,
      content_type: 'application/pdf',
      sha256: 'b'.repeat(64),
      storage_key: `orders/${NORTH}/12/event-test`,
      created_at: 1_763_800_000,
    });
    const events = await publish();
    expect(events.map((event) => [event.type, event.data])).toEqual([
      ['order.file_attached', { object: { id: Number(id), name: 'cmr ğ.pdf', category_id: 1, order_id: 12 } }],
    ]);
  });

  it('when a row holds a value the list cannot show, then its change is reported and dropped, and the others are published', async () => {
    await db.knex('invoices').where({ id: 107 }).update({ status: 'cancelled' });
    await db.knex('invoices').where({ id: 105 }).update({ branch_id: 9 });
    const events = await publish();
    expect(unreadable).toEqual([107]);
    expect(events.map((event) => [event.type, event.data.object.id])).toEqual([['invoice.updated', 105]]);
    await db.knex('invoices').where({ id: 107 }).update({ status: 'paid' });
    expect((await publish()).map((event) => [event.type, event.data.previous_attributes])).toEqual([['invoice.updated', { status: 'issued' }]]);
  });

  it('when an invoice is inserted by SQL, then invoice.created is in the feed of its directory only', async () => {
    const south = await feed.latestId(SOUTH);
    const north = await feed.latestId(NORTH);
    await insertInvoiceRow(db.knex, 501, SOUTH, 'SQL/501');
    await publish();
    expect((await feed.page(SOUTH, south, 10, [])).map((event) => [event.type, event.data.object.nr])).toEqual([['invoice.created', 'SQL/501']]);
    expect(await feed.page(NORTH, north, 10, [])).toEqual([]);
  });

  it('when types are asked for, then pages merge them in id order and stop at the limit', async () => {
    const all = await feed.page(NORTH, 0, 500, []);
    const updatesAndDeletes = all.filter((event) => event.type === 'invoice.updated' || event.type === 'invoice.deleted');
    expect(updatesAndDeletes.length).toBeGreaterThan(2);
    expect(await feed.page(NORTH, 0, 500, ['invoice.deleted', 'invoice.updated'])).toEqual(updatesAndDeletes);
    expect(await feed.page(NORTH, 0, 2, ['invoice.deleted', 'invoice.updated'])).toEqual(updatesAndDeletes.slice(0, 2));
    expect(await feed.page(NORTH, updatesAndDeletes[0]!.id, 500, ['invoice.updated', 'invoice.deleted'])).toEqual(updatesAndDeletes.slice(1));
  });

  it('when a waiter waits past the newest id, then an event published by another connection wakes it, and a timeout ends it', async () => {
    const after = await feed.latestId(SOUTH);
    const started = Date.now();
    expect(await timed(feed.waitForEvents(SOUTH, after, 150))).toBe('resolved');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const waiting = feed.waitForEvents(SOUTH, after, 20_000);
    await insertInvoiceRow(db.knex, 502, SOUTH, 'SQL/502');
    await publish();
    expect(await timed(waiting, 5_000)).toBe('resolved');
    const aborter = new AbortController();
    const aborted = feed.waitForEvents(SOUTH, await feed.latestId(SOUTH), 20_000, aborter.signal);
    aborter.abort();
    expect(await timed(aborted, 1_000)).toBe('resolved');
  });

  it('when retention removes events, then cursorMarks names the highest removed id of each directory only', async () => {
    const south = await feed.page(SOUTH, 0, 500, []);
    expect(south.length).toBeGreaterThan(2);
    const cutoff = south[1]!.id;
    // Age the first two south events (and nothing else) past the retention.
    await db.knex('events').where('directory', SOUTH).andWhere('id', '<=', cutoff).update({ created: 1 });
    expect(await feed.removeExpired(1_000, 1)).toBe(1);
    expect(await feed.removeExpired(1_000, 100)).toBe(1);
    expect(await feed.removeExpired(1_000, 100)).toBe(0);
    expect(await feed.cursorMarks(SOUTH)).toEqual({ removedThrough: cutoff, restores: [] });
    expect(await feed.cursorMarks(NORTH)).toEqual({ removedThrough: 0, restores: [] });
    expect((await feed.page(SOUTH, 0, 500, [])).map((event) => event.id)).toEqual(south.slice(2).map((event) => event.id));
  });

  // SQLite lets one writer at a time in: commits cannot overtake each other there.
  if (profile === 'mariadb') {
    it('when transactions commit in another order than they started, then ids still grow in the order a reader sees them', async () => {
      const reader = await feed.latestId(NORTH);
      // T1 writes first and commits last; T2 writes and commits while T1 is open; a batch runs in between.
      const t1 = await db.knex.transaction();
      const [first] = await t1('order_files').insert(fileRow('t1'));
      const [second] = await db.knex('order_files').insert(fileRow('t2'));
      expect(Number(first)).toBeLessThan(Number(second));
      const whileOpen = await publish();
      expect(whileOpen.map((event) => event.data.object.id)).toEqual([Number(second)]);
      const seen = await feed.page(NORTH, reader, 100, []);
      expect(seen.map((event) => event.data.object.id)).toEqual([Number(second)]);
      await t1.commit();
      await publish();
      // The reader keeps its cursor and gets T1's event: its id is above the one it saw.
      const next = await feed.page(NORTH, seen.at(-1)!.id, 100, []);
      expect(next.map((event) => event.data.object.id)).toEqual([Number(first)]);
    });
  }
});

function fileRow(label: string) {
  return {
    directory: NORTH,
    order_id: 11,
    category_id: null,
    name: `${label}.pdf`,
    size: 10,
    content_type: 'application/pdf',
    sha256: 'c'.repeat(64),
    storage_key: `orders/${NORTH}/11/${label}`,
    created_at: 1_763_800_000,
  };
}

async function timed(promise: Promise<unknown>, ms = 10_000): Promise<'resolved' | 'timed out'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timed out'>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), ms);
  });
  try {
    return await Promise.race([promise.then(() => 'resolved' as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
