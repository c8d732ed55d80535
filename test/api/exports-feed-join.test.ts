import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import { readZip } from '../support/zip-reader.js';
import { parseCsv } from '../support/csv.js';

/**
 * The join of an export with the change feed (contract, "Exports": `events_cursor`): writes through the API (uploads)
 * and straight in SQL (another system) race the export; a new integrator imports the archive, then follows the feed
 * from `events_cursor`, and ends up with what the list shows, missing no change committed after the 202.
 */
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({ EVENTS_PUBLISH_INTERVAL_MS: '50' }, { label: 'exports-join' });
});

afterAll(async () => {
  await api?.stop();
});

interface FeedEvent {
  id: number;
  type: string;
  data: { object: Record<string, unknown> };
}

describe(`export then follow the feed (${PROFILE})`, () => {
  it('when uploads and SQL updates race the export, then the archive plus the events after events_cursor give what the list shows, and every write after the 202 has its event', async () => {
    const list = async () => (await envelopeOf(await api.call('/invoices?per_page=500'))).data.invoices as Array<{ id: number; customer_name: string }>;
    const invoices = await list();
    const ids = invoices.map((invoice) => invoice.id);
    let accepted = false;
    let stop = false;
    let counter = 0;
    /** Writes begun once the 202 was in hand: these must all have their events past the cursor. */
    const afterSqlWrites: Array<{ id: number; name: string }> = [];
    const afterUploads: number[] = [];
    const sqlWrite = async () => {
      const id = ids[counter % ids.length]!;
      const name = `Race ${counter++}, "quoted"`;
      const begunAfter = accepted;
      await api.knex('invoices').where({ id }).update({ customer_name: name });
      if (begunAfter) afterSqlWrites.push({ id, name });
    };
    // Paced by the uploads (each a real request): SQLite's writes are synchronous in this process, and a tight loop
    // of them would starve the API it shares the process with.
    const writer = async () => {
      while (!stop) {
        await sqlWrite();
        await upload();
      }
    };
    const upload = async () => {
      {
        const begunAfter = accepted;
        const content = Buffer.concat([PDF_BYTES, Buffer.from(`% ${randomBytes(8).toString('hex')}\n`)]);
        const { body, contentType } = multipart([{ name: 'files', filename: 'race.pdf', content, type: 'application/pdf' }]);
        const answer = await envelopeOf(await api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } }));
        expect(answer.status).toBe(201);
        if (begunAfter) afterUploads.push(...(answer.data.uploaded as Array<{ id: number }>).map((file) => file.id));
      }
    };
    const writers = [writer(), writer()];

    // The export is asked for while the writers run.
    await expect.poll(() => counter, { timeout: 10_000 }).toBeGreaterThan(5);
    const created = await envelopeOf(
      await api.call('/exports', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ documents: ['ubl'] }) }),
    );
    accepted = true;
    expect(created.status).toBe(202);
    const { id: exportId, events_cursor: cursor } = created.data as { id: number; events_cursor: number };
    await expect
      .poll(async () => (await envelopeOf(await api.call(`/exports/${exportId}`))).data.status as string, { timeout: 120_000, interval: 100 })
      .toBe('succeeded');
    // And a little after: changes committed after the archive's moment must come through the feed too.
    const until = counter + 6;
    await expect.poll(() => counter, { timeout: 10_000 }).toBeGreaterThan(until);
    stop = true;
    await Promise.all(writers);
    expect(afterSqlWrites.length).toBeGreaterThan(0);
    expect(afterUploads.length).toBeGreaterThan(0);

    // The integrator imports the archive...
    const archive = Buffer.from(await (await api.call(`/exports/${exportId}/download`)).arrayBuffer());
    const members = await readZip(archive);
    const [header, ...rows] = parseCsv(members.get('invoices.csv')!.toString('utf8'));
    const nameColumn = header!.indexOf('customer_name');
    const local = new Map(rows.map((row) => [Number(row[0]), row[nameColumn]!]));
    expect([...local.keys()].sort()).toEqual([...ids].sort());

    // ...then follows the feed from events_cursor until it is caught up with the last writes.
    const seen: FeedEvent[] = [];
    let after = cursor;
    const lastName = new Map(afterSqlWrites.map((write) => [write.id, write.name]));
    const caughtUp = () =>
      [...lastName].every(([id, name]) =>
        seen.some((event) => event.type === 'invoice.updated' && event.data.object.id === id && event.data.object.customer_name === name),
      ) && afterUploads.every((fileId) => seen.some((event) => event.type === 'order.file_attached' && event.data.object.id === fileId));
    await expect
      .poll(
        async () => {
          for (;;) {
            const page = await envelopeOf(await api.call(`/events?after=${after}&limit=500`));
            seen.push(...(page.data.events as FeedEvent[]));
            after = page.data.next_after;
            if (!page.data.has_more) break;
          }
          return caughtUp();
        },
        { timeout: 30_000, interval: 200 },
      )
      .toBe(true);
    expect(seen.every((event) => event.id > cursor)).toBe(true);
    for (const event of seen) if (event.type === 'invoice.updated') local.set(event.data.object.id as number, event.data.object.customer_name as string);
    // What the client now holds is what the list shows.
    expect(Object.fromEntries(local)).toEqual(Object.fromEntries((await list()).map((invoice) => [invoice.id, invoice.customer_name])));
  });
});
