import { randomUUID } from 'node:crypto';
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, PROFILE, startTestApi, type Tenant, type TestApi } from '../support/api-harness.js';
import { DIRS } from '../support/test-fixture.js';
import { heldExportRow } from '../support/export-rows.js';

/**
 * Export runners on the profile under test (one runner: the API process embedded, one worker in production): staged
 * archives of attempts that are no longer running are swept, and directories take turns for the runner.
 */
let api: TestApi;
let heldId = 0;
const STALE = `export-999999-1-${randomUUID()}.zip`;
const UNKNOWN_OLD = `export-${randomUUID()}.zip`;
const UNKNOWN_NEW = `export-${randomUUID()}.zip`;
const live = () => `export-${heldId}-1-held.zip`;

beforeAll(async () => {
  const env = { EXPORT_MAX_ACTIVE: '10', EVENTS_PUBLISH_INTERVAL_MS: '50' };
  api = await startTestApi(env, {
    label: 'export-sharing',
    worker: false,
    // Before any runner starts: what runners killed mid-export left, and the file of an attempt another runner holds.
    beforeStart: async (dataDir, { knex }) => {
      const [id] = await knex('exports').insert(heldExportRow(DIRS.alpine));
      heldId = Number(id);
      const tmp = path.join(dataDir, 'tmp');
      await mkdir(tmp, { recursive: true });
      for (const name of [STALE, UNKNOWN_OLD, UNKNOWN_NEW, live()]) await writeFile(path.join(tmp, name), 'PK partial');
      const twoHoursAgo = new Date(Date.now() - 7_200_000);
      await utimes(path.join(tmp, UNKNOWN_OLD), twoHoursAgo, twoHoursAgo);
    },
  });
  await api.stack?.startWorker(api.dataDir, env);
});

afterAll(async () => {
  await api?.stop();
});

function post(body: unknown, as: Tenant) {
  return api.call('/exports', { method: 'POST', as, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

async function stagedFiles(): Promise<string[]> {
  return (await readdir(path.join(api.dataDir, 'tmp')).catch(() => [] as string[])).filter((name) => name.startsWith('export-')).sort();
}

describe(`staged export archives (${PROFILE})`, () => {
  it('when a runner starts, then the staged archives of attempts no longer running are removed and the running attempt’s stays', async () => {
    await expect.poll(async () => (await stagedFiles()).includes(STALE), { timeout: 20_000, interval: 100 }).toBe(false);
    expect(await stagedFiles()).toEqual([live(), UNKNOWN_NEW].sort());
    expect((await api.call(`/exports/${heldId}`, { method: 'DELETE', as: 'alpine' })).status).toBe(200);
  });
});

describe(`runners shared between directories (${PROFILE})`, () => {
  it('when one directory has more exports queued than there are runners, then another directory’s export starts before that backlog drains', async () => {
    // Four exports of one directory (each its own PDFs: language and duplicate differ, so no cached PDF is shared).
    const backlog: number[] = [];
    for (const [lang, duplicate] of [
      ['en', false],
      ['pl', false],
      ['en', true],
      ['pl', true],
    ] as const) {
      const answer = await envelopeOf(await post({ documents: ['pdf'], lang, duplicate }, 'baltic'));
      expect(answer.status).toBe(202);
      backlog.push(answer.data.id as number);
    }
    const other = await envelopeOf(await post({ documents: ['ubl'] }, 'alpine'));
    expect(other.status).toBe(202);
    // Read the other directory's export first, then the backlog: queued ones seen after it started were queued when it started.
    let queuedWhenOtherStarted = -1;
    await expect
      .poll(
        async () => {
          const mine = (await envelopeOf(await api.call(`/exports/${other.data.id}`, { as: 'alpine' }))).data as { status: string };
          if (mine.status === 'queued') return 'queued';
          const listed = (await envelopeOf(await api.call('/exports', { as: 'baltic' }))).data as Array<{ id: number; status: string }>;
          queuedWhenOtherStarted = listed.filter((item) => backlog.includes(item.id) && item.status === 'queued').length;
          return 'started';
        },
        { timeout: 120_000, interval: 50 },
      )
      .toBe('started');
    expect(queuedWhenOtherStarted).toBeGreaterThan(0);
    for (const id of backlog) await api.call(`/exports/${id}`, { method: 'DELETE', as: 'baltic' });
  });
});
