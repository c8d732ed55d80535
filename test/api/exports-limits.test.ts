import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, PROFILE, startTestApi, type Tenant, type TestApi } from '../support/api-harness.js';
import { DIRS } from '../support/test-fixture.js';

/**
 * A directory's limits on exports (contract, "Exports" and "Export storage"): EXPORT_MAX_ACTIVE counted under a lock
 * however many POSTs arrive at once, and the bytes of kept archives (EXPORT_STORAGE_MB_PER_DIRECTORY, 1 MiB here).
 */
let api: TestApi;
const MIB = 1024 * 1024;

beforeAll(async () => {
  api = await startTestApi({ EXPORT_MAX_ACTIVE: '1', EXPORT_STORAGE_MB_PER_DIRECTORY: '1' }, { label: 'export-limits' });
});

afterAll(async () => {
  await api?.stop();
});

function post(body: unknown, as: Tenant = 'baltic') {
  return api.call('/exports', { method: 'POST', as, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

async function statusOf(id: number, as: Tenant = 'baltic'): Promise<{ status: string; error: string | null; size: number | null }> {
  return (await envelopeOf(await api.call(`/exports/${id}`, { as }))).data;
}

async function ended(id: number, as: Tenant = 'baltic') {
  await expect.poll(async () => (await statusOf(id, as)).status, { timeout: 120_000, interval: 100 }).toMatch(/^(succeeded|failed)$/);
  return statusOf(id, as);
}

describe(`EXPORT_MAX_ACTIVE under concurrent POSTs (${PROFILE})`, () => {
  it('when many POSTs of one directory arrive at once with one slot left, then exactly one is 202 and the others 429 `Too many exports in progress.`', async () => {
    // PDFs of every invoice: the export accepted first is still queued or running while the others are counted.
    const answers = await Promise.all(Array.from({ length: 12 }, () => post({ documents: ['pdf', 'facturx'] }, 'alpine')));
    const bodies = await Promise.all(answers.map((answer) => envelopeOf(answer)));
    const accepted = bodies.filter((body) => body.status === 202);
    expect(accepted).toHaveLength(1);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(11);
    for (const body of bodies.filter((b) => b.status === 429)) expect(body).toMatchObject({ message: 'Too many exports in progress.', data: null });
    for (const answer of refused) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const rows = await api.knex('exports').where({ directory: DIRS.alpine }).select('id');
    expect(rows.map((row) => Number(row.id))).toEqual([accepted[0]!.data.id]);
    expect((await api.call(`/exports/${accepted[0]!.data.id}`, { method: 'DELETE', as: 'alpine' })).status).toBe(200);
  });
});

describe(`EXPORT_STORAGE_MB_PER_DIRECTORY (${PROFILE})`, () => {
  it('when the kept archives reach the budget, then one more POST is 429 `Export storage quota exceeded.` with Retry-After until the oldest expires; another directory is not affected', async () => {
    const first = (await envelopeOf(await post({ documents: ['ubl'] }))).data.id as number;
    expect((await ended(first)).status).toBe('succeeded');
    // The kept archive counted as 1 MiB, expiring in 100 s.
    const expires = Math.floor(Date.now() / 1000) + 100;
    await api.knex('exports').where({ id: first }).update({ size: MIB, expires });
    const refused = await post({ documents: ['ubl'] });
    expect(await envelopeOf(refused)).toEqual({ status: 429, message: 'Export storage quota exceeded.', data: null });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(95);
    expect(retryAfter).toBeLessThanOrEqual(100);
    expect(await api.knex('exports').where({ directory: DIRS.baltic }).count({ n: '*' })).toEqual([{ n: 1 }]);
    const other = await envelopeOf(await post({ documents: ['ubl'] }, 'alpine'));
    expect(other.status).toBe(202);
    await ended(other.data.id as number, 'alpine');
    await api.knex('exports').where({ directory: DIRS.alpine }).delete();
    // An expired archive is no longer kept.
    await api
      .knex('exports')
      .where({ id: first })
      .update({ expires: Math.floor(Date.now() / 1000) - 1 });
    const after = await envelopeOf(await post({ documents: ['ubl'] }));
    expect(after.status).toBe(202);
    await ended(after.data.id as number);
    await api.knex('exports').where({ directory: DIRS.baltic }).delete();
  });

  it('when an archive would take its directory past the budget, then the export fails with `Storage failed.` and its archive is not kept', async () => {
    const first = (await envelopeOf(await post({ documents: ['ubl'] }))).data.id as number;
    expect((await ended(first)).status).toBe('succeeded');
    // Ten bytes left: the next POST is taken, its archive does not fit.
    await api
      .knex('exports')
      .where({ id: first })
      .update({ size: MIB - 10 });
    const next = await envelopeOf(await post({ documents: ['ubl'] }));
    expect(next.status).toBe(202);
    const failed = await ended(next.data.id as number);
    expect(failed).toMatchObject({ status: 'failed', error: 'Storage failed.', size: null });
    await expect.poll(async () => (await api.objectKeys()).filter((key) => key.startsWith(`exports/${next.data.id}-`)), { timeout: 10_000 }).toEqual([]);
    expect((await api.call(`/exports/${next.data.id}/download`)).status).toBe(409);
    await api.knex('exports').where({ directory: DIRS.baltic }).delete();
  });
});
