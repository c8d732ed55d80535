import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventFeedPort, ListEventsUseCase } from '@logi/domain';
import { Tokens } from '@logi/api';
import { eventPageSchema } from '../../packages/api/src/ops/openapi/event.schemas.js';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { DIRS } from '../support/test-fixture.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import { insertInvoiceRow } from '../support/sql-writes.js';

/**
 * GET /v1/events over HTTP, on the profile under test: what the fixtures
 * made, writes through the API and straight in SQL, validation, tenancy,
 * long polls, retention, and a reader following the feed while several
 * writers commit (some out of order, some rolled back).
 */
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({ EVENTS_PUBLISH_INTERVAL_MS: '50' }, { label: 'events' });
});

afterAll(async () => {
  await api?.stop();
});

interface FeedEvent {
  id: number;
  type: string;
  created: number;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

async function feed(query: string, as: 'baltic' | 'alpine' = 'baltic') {
  const response = await api.call(`/events${query}`, { as });
  const body = await envelopeOf(response);
  // Every page is what the OpenAPI document says it is (strict objects: no field it does not know).
  if (response.status === 200) eventPageSchema.parse(body.data);
  return { response, body, data: body.data as { events: FeedEvent[]; has_more: boolean; next_after: number } };
}

/** Follows the feed with long polls until `done` says so (or the deadline); returns every event seen, in order. */
async function follow(after: number, done: (events: FeedEvent[]) => boolean, deadlineMs = 60_000): Promise<FeedEvent[]> {
  const seen: FeedEvent[] = [];
  const deadline = Date.now() + deadlineMs;
  let cursor = after;
  while (!done(seen) && Date.now() < deadline) {
    const { response, data } = await feed(`?after=${cursor}&wait=5&limit=7`);
    expect(response.status).toBe(200);
    seen.push(...data.events);
    cursor = data.next_after;
  }
  return seen;
}

async function latest(): Promise<number> {
  let cursor = 0;
  for (;;) {
    const { data } = await feed(`?after=${cursor}&limit=500`);
    if (data.events.length === 0) return cursor;
    cursor = data.next_after;
  }
}

function upload(orderId: number, name: string, content: Buffer) {
  const { body, contentType } = multipart([{ name: 'files', filename: name, content, type: 'application/pdf' }]);
  return api.call(`/orders/${orderId}/files`, { method: 'POST', body, headers: { 'Content-Type': contentType } });
}

function uniquePdf(): Buffer {
  return Buffer.concat([PDF_BYTES, Buffer.from(`% ${randomBytes(8).toString('hex')}\n`)]);
}

describe(`GET /v1/events (${PROFILE})`, () => {
  it('when the fixtures were loaded, then the feed holds one invoice.created per invoice of the directory, each the list item', async () => {
    const seen = await follow(0, (events) => events.filter((event) => event.type === 'invoice.created').length >= 9, 20_000);
    const list = await envelopeOf(await api.call('/invoices?per_page=500'));
    const created = seen.filter((event) => event.type === 'invoice.created');
    const byId = new Map(created.map((event) => [event.data.object.id, event.data.object]));
    expect([...byId.keys()].sort()).toEqual((list.data.invoices as Array<{ id: number }>).map((item) => item.id).sort());
    for (const item of list.data.invoices as Array<{ id: number }>) expect(byId.get(item.id)).toEqual(item);
    // The other directory's invoice is not in this feed, and this one's not in the other.
    expect(created.some((event) => event.data.object.id === 9101)).toBe(false);
    const alpine = await feed('?types=invoice.created', 'alpine');
    expect(alpine.data.events.map((event) => event.data.object.id)).toEqual([9101]);
  });

  it('when a status is set to paid straight in SQL, then invoice.updated names what changed, with the values before', async () => {
    const after = await latest();
    await api.knex('invoices').where({ id: 9009 }).update({ status: 'paid', paid: 1450, left_to_pay: 0, payment_date: 1_764_000_000 });
    const [event] = await follow(after, (events) => events.length > 0);
    expect(event).toMatchObject({
      type: 'invoice.updated',
      data: { previous_attributes: { status: 'issued', paid: 0, left_to_pay: 1450, payment_date: null } },
    });
    expect(Object.keys(event!.data.previous_attributes!).sort()).toEqual(['left_to_pay', 'paid', 'payment_date', 'status']);
    const list = await envelopeOf(await api.call('/invoices?per_page=500'));
    expect(event!.data.object).toEqual((list.data.invoices as Array<{ id: number }>).find((item) => item.id === 9009));
    expect(Number.isInteger(event!.created)).toBe(true);
  });

  it('when a file is uploaded, then order.file_attached carries the uploaded item and order_id; its duplicate adds none', async () => {
    const after = await latest();
    const content = uniquePdf();
    const first = await envelopeOf(await upload(3002, 'cmr ğ.pdf', content));
    expect(first.status).toBe(201);
    const again = await envelopeOf(await upload(3002, 'cmr again.pdf', content));
    expect(again.data.uploaded[0].duplicate_of).toBe(first.data.uploaded[0].id);
    const seen = await follow(after, (events) => events.length > 0);
    expect(seen.map((event) => [event.type, event.data])).toEqual([
      ['order.file_attached', { object: { id: first.data.uploaded[0].id, name: 'cmr ğ.pdf', category_id: null, order_id: 3002 } }],
    ]);
    // Nothing more comes for the duplicate.
    const { data } = await feed(`?after=${seen.at(-1)!.id}&wait=1`);
    expect(data.events).toEqual([]);
  });

  it('when nothing comes within wait, then the answer is empty with next_after = after; when an event comes, the wait ends early', async () => {
    const after = await latest();
    const started = Date.now();
    const quiet = await feed(`?after=${after}&wait=1`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(quiet.data).toEqual({ events: [], has_more: false, next_after: after });
    const waiting = feed(`?after=${after}&wait=30&types=invoice.updated`);
    // An event of another type does not end the wait; the update does.
    await upload(3001, 'other type.pdf', uniquePdf());
    await api.knex('invoices').where({ id: 9004 }).update({ branch_id: 7 });
    const woken = Date.now();
    const { data } = await waiting;
    expect(Date.now() - woken).toBeLessThan(10_000);
    expect(data.events.map((event) => [event.type, event.data.object.id])).toEqual([['invoice.updated', 9004]]);
  });

  it('when a directory holds EVENTS_MAX_WAITING (5) long polls, then one more is 429 with Retry-After 1; each slot comes back when its poll ends', async () => {
    const listEvents = api.container.get<ListEventsUseCase>(Tokens.ListEvents);
    const after = await latest();
    const clients = Array.from({ length: 5 }, () => new AbortController());
    const polls = clients.map((client) =>
      api.call(`/events?after=${after}&wait=30`, { signal: client.signal }).then(
        (response) => response.status,
        () => 'gone' as const,
      ),
    );
    await vi.waitFor(() => expect(listEvents.waitingOf(DIRS.baltic)).toBe(5));

    const refused = await api.call(`/events?after=${after}&wait=1`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await envelopeOf(refused)).toEqual({ status: 429, message: 'Too many waiting requests.', data: null });
    // A read without wait, and another directory's long poll, are not held back.
    expect((await feed(`?after=${after}`)).response.status).toBe(200);
    expect((await feed('?after=0&limit=1&wait=1', 'alpine')).response.status).toBe(200);

    // Two clients go away: their slots are free again, and a poll answered after its wait gives its slot back too.
    clients[0]!.abort();
    clients[1]!.abort();
    await vi.waitFor(() => expect(listEvents.waitingOf(DIRS.baltic)).toBe(3));
    const answered = await feed(`?after=${after}&wait=1`);
    expect(answered.response.status).toBe(200);
    expect(answered.data).toEqual({ events: [], has_more: false, next_after: after });
    expect(listEvents.waitingOf(DIRS.baltic)).toBe(3);

    // An event answers the three others.
    await api.knex('invoices').where({ id: 9004 }).update({ branch_id: 8 });
    expect(await Promise.all(polls)).toEqual(['gone', 'gone', 200, 200, 200]);
    expect(listEvents.waitingOf(DIRS.baltic)).toBe(0);
  });

  it('when limit is smaller than what is there, then has_more is true and next_after is the last id returned', async () => {
    const first = await feed('?limit=2');
    expect(first.data.events).toHaveLength(2);
    expect(first.data.has_more).toBe(true);
    expect(first.data.next_after).toBe(first.data.events[1]!.id);
    const next = await feed(`?after=${first.data.next_after}&limit=2`);
    expect(next.data.events[0]!.id).toBeGreaterThan(first.data.next_after);
  });

  it.each([
    ['after=-1', 'after'],
    ['after=1.5', 'after'],
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['types=invoice.paid', 'types'],
    ['types=invoice.created,', 'types'],
    ['wait=31', 'wait'],
    ['after=1&after=2', 'after'],
    ['types[]=invoice.created', 'types'],
  ])('when the query has %s, then 422 names %s', async (query, field) => {
    const { response, body } = await feed(`?${query}`);
    expect(response.status).toBe(422);
    expect(body.message).toBe('The given data was invalid.');
    expect(Object.keys(body.errors ?? {})).toEqual([field]);
    expect(body.data).toBeNull();
  });

  it('when there are no credentials, then 401', async () => {
    const response = await api.call('/events', { as: null });
    expect(response.status).toBe(401);
  });

  it('when retention removed events past the cursor, then 410 says so; a cursor past them still reads', async () => {
    const south = await feed('', 'alpine');
    const oldest = south.data.events[0]!;
    await api.knex('events').where({ id: oldest.id }).update({ created: 1 });
    // The housekeeping's retention step, run now.
    expect(await api.container.get<EventFeedPort>(Tokens.EventFeed).removeExpired(1_000, 100)).toBe(1);
    const gone = await feed('?after=0', 'alpine');
    expect(gone.response.status).toBe(410);
    expect(gone.body).toEqual({ status: 410, message: 'Events after this cursor are no longer kept.', data: null });
    const fine = await feed(`?after=${oldest.id}`, 'alpine');
    expect(fine.response.status).toBe(200);
  });

  it('when several writers commit at once (uploads, SQL transactions, some out of order, some rolled back), then a reader with wait gets exactly one event per committed change, ids growing', async () => {
    const after = await latest();
    const expected = new Set<string>();
    const rolledBack = new Set<number>();
    const writers: Array<Promise<void>> = [];
    // Uploads through the API.
    for (let index = 0; index < 6; index += 1) {
      writers.push(
        (async () => {
          const answer = await envelopeOf(await upload(3001 + (index % 5), `concurrent-${index}.pdf`, uniquePdf()));
          expect(answer.status).toBe(201);
          expect(answer.data.uploaded[0].duplicate_of).toBeUndefined();
          expected.add(`order.file_attached:${answer.data.uploaded[0].id}`);
        })(),
      );
    }
    // SQL transactions, each an invoice row and two order rows: one event each; every third rolled back.
    for (let index = 0; index < 9; index += 1) {
      const id = 70_001 + index;
      writers.push(
        (async () => {
          const rollBack = index % 3 === 2;
          // As any InnoDB client: a transaction chosen as a deadlock's victim was rolled back whole and is run
          // again. Concurrent first inserts of a new kept-count key (directory, type, status, branch, country)
          // can meet one (the counts' upserts lock the gap); its rolled-back attempt must leave no event either.
          await retryOnDeadlock(() =>
            api.knex.transaction(async (trx) => {
              await insertInvoiceRow(trx, id, DIRS.baltic, `ERP/${id}`);
              await trx('invoice_orders').insert(
                [0, 1].map((position) => ({
                  invoice_id: id,
                  position,
                  type: 'FTL',
                  nr: `ERP/${id}/O${position}`,
                  cmr: '',
                  tasks: '[]',
                  files: '[]',
                  contacts: '[]',
                })),
              );
              if (rollBack) throw new Error('rolled back on purpose');
            }),
          ).catch((error: unknown) => {
            if (!rollBack) throw error;
          });
          if (rollBack) rolledBack.add(id);
          else expected.add(`invoice.created:${id}`);
        })(),
      );
    }
    // Out of order (MariaDB lets writers overlap; SQLite has one writer at a time): a file row written by
    // another system in a transaction that starts first and commits after the others.
    if (PROFILE === 'production') {
      const early = await api.knex.transaction();
      const [fileId] = await early('order_files').insert({
        directory: DIRS.baltic,
        order_id: 3003,
        category_id: 2,
        name: 'erp.pdf',
        size: PDF_BYTES.length,
        content_type: 'application/pdf',
        sha256: createHash('sha256').update('erp').digest('hex'),
        storage_key: `orders/${DIRS.baltic}/3003/erp-${randomBytes(4).toString('hex')}`,
        created_at: 1_763_800_000,
      });
      const others = [...writers];
      writers.push(
        (async () => {
          // After every other writer has ended, whatever came of it (a failure is reported below).
          await Promise.allSettled(others);
          await early.commit();
          expected.add(`order.file_attached:${Number(fileId)}`);
        })(),
      );
    }
    const reading = follow(after, (events) => events.length >= 6 + 6 + (PROFILE === 'production' ? 1 : 0), 90_000);
    // Every writer ends before a failure is reported, so none is still uploading when the API stops.
    for (const settled of await Promise.allSettled(writers)) if (settled.status === 'rejected') throw settled.reason;
    const seen = await reading;
    // A little longer: anything extra (a duplicate, a rolled-back insert) would show up now.
    const { data: tail } = await feed(`?after=${seen.at(-1)!.id}&wait=1`);
    const all = [...seen, ...tail.events];
    expect(all.map((event) => `${event.type}:${String(event.data.object.id)}`).sort()).toEqual([...expected].sort());
    const ids = all.map((event) => event.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of rolledBack) expect(all.some((event) => event.data.object.id === id)).toBe(false);
  });
});

/** Runs a transaction again when MariaDB rolled it back as a deadlock's victim (ER_LOCK_DEADLOCK), up to five tries. */
async function retryOnDeadlock<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ER_LOCK_DEADLOCK' || attempt >= 5) throw error;
    }
  }
}
