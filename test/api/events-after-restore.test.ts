import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { cli } from '../support/cli-runner.js';
import { DIRS } from '../support/test-fixture.js';
import { insertInvoiceRow } from '../support/sql-writes.js';

/**
 * GET /v1/events after `pnpm cli db:after-restore`, on the profile under
 * test: the database "restored" here is the running one with its newest
 * events removed (what a restore from an older backup leaves), the command
 * run through the real CLI against it.
 */
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({ EVENTS_PUBLISH_INTERVAL_MS: '50' }, { label: 'after-restore' });
});

afterAll(async () => {
  await api?.stop();
});

interface Page {
  events: Array<{ id: number; type: string; data: { object: Record<string, unknown> } }>;
  has_more: boolean;
  next_after: number;
}

async function feed(query: string) {
  const response = await api.call(`/events${query}`);
  const body = await envelopeOf(response);
  return { status: response.status, body, data: body.data as Page };
}

/** The directory's newest id, once every fixture change is published. */
async function end(): Promise<number> {
  let cursor = 0;
  for (;;) {
    const { data } = await feed(`?after=${cursor}&limit=500`);
    if (data.events.length === 0) return cursor;
    cursor = data.next_after;
  }
}

const RESTORED = { status: 410, message: 'This cursor is from before a restore; resynchronise.', data: null };

describe(`GET /v1/events after a restore (${PROFILE} profile)`, { timeout: 120_000 }, () => {
  it('when db:after-restore ran, then a cursor past the restored end is 410, one at or below it goes on and sees the new events, whose ids start past the gap', async () => {
    await expect.poll(() => api.knex('event_pending').count({ n: '*' }).first(), { timeout: 30_000 }).toEqual({ n: 0 });
    const before = await end();
    const ids = ((await api.knex('events').select('id').where('directory', DIRS.baltic).orderBy('id')) as Array<{ id: unknown }>).map((row) => Number(row.id));
    expect(ids.length).toBeGreaterThan(3);
    // The backup ended two events of this directory earlier: those were lost with the restore.
    const restoredEnd = ids.at(-3)!;
    await api.knex('events').where('id', '>', restoredEnd).delete();

    const env = { DATA_DIR: api.dataDir, ...(api.stack?.env ?? {}) };
    const run = await cli(['db:after-restore'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const said = /^Restored feed ends at event (\d+); new events start at (\d+)\.$/m.exec(run.stdout);
    expect(said).not.toBeNull();
    const [told, firstNewId] = [Number(said![1]), Number(said![2])];
    expect(told).toBe(restoredEnd);
    expect(firstNewId).toBeGreaterThan(restoredEnd + 999_999_999);
    expect(Number.isSafeInteger(firstNewId)).toBe(true);

    // The client that had read to the old end, and one in the middle of the lost events: 410, also as a long poll.
    for (const query of [`?after=${before}`, `?after=${restoredEnd + 1}`, `?after=${firstNewId - 1}`, `?after=${before}&wait=30`]) {
      const refused = await feed(query);
      expect([query, refused.status, refused.body]).toEqual([query, 410, RESTORED]);
    }

    // A cursor at the restored end goes on: the events kept, then a new one past the gap.
    const kept = await feed(`?after=${ids.at(-5)!}`);
    expect([kept.status, kept.data.events.map((event) => event.id)]).toEqual([200, ids.slice(-4, -2)]);
    const waiting = feed(`?after=${restoredEnd}&wait=30`);
    await insertInvoiceRow(api.knex, 91_001, DIRS.baltic, 'AFTER/RESTORE/1');
    const next = await waiting;
    expect(next.status).toBe(200);
    expect(next.data.events.map((event) => [event.type, event.data.object.id])).toEqual([['invoice.created', 91_001]]);
    expect(next.data.events[0]!.id).toBeGreaterThanOrEqual(firstNewId);
    // The new cursor goes on too.
    const after = await feed(`?after=${next.data.next_after}`);
    expect([after.status, after.data.events]).toEqual([200, []]);

    // Twice is safe: a second mark, the new events' cursor still goes on, the gaps still refuse.
    const again = await cli(['db:after-restore'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Restored feed ends at event ${next.data.next_after}; `);
    expect(again.stdout).toContain(`Earlier restores: ${restoredEnd} -> ${firstNewId}.`);
    expect((await feed(`?after=${next.data.next_after}`)).status).toBe(200);
    expect((await feed(`?after=${before}`)).body).toEqual(RESTORED);
  });
});
