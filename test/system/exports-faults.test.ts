import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { replaceDirectoryWithFile } from '../support/break-storage.js';
import { insertInvoiceRow } from '../support/sql-writes.js';
import { DIRS } from '../support/test-fixture.js';

/**
 * Exports under faults: storage failing while the archive is written (embedded profile: local files), and a worker
 * SIGKILLed in the middle of an export (production profile: MariaDB, Redis, S3, worker processes).
 */

async function createExport(api: TestApi, body: unknown): Promise<number> {
  const answer = await envelopeOf(await api.call('/exports', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }));
  expect(answer.status).toBe(202);
  return answer.data.id as number;
}

async function exportOf(api: TestApi, id: number) {
  return (await envelopeOf(await api.call(`/exports/${id}`))).data as {
    status: string;
    done: number;
    size: number | null;
    sha256: string | null;
    error: string | null;
  };
}

async function exportTempFiles(dataDir: string): Promise<string[]> {
  return (await readdir(path.join(dataDir, 'tmp')).catch(() => [] as string[])).filter((name) => name.startsWith('export-'));
}

describe('when storage fails while an export archive is stored (embedded)', () => {
  let api: TestApi;
  const logLines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    api = await startTestApi({ EVENTS_PUBLISH_INTERVAL_MS: '50' }, { profile: 'embedded', label: 'export-storage', logLines });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('then the export is failed with the fixed text `Storage failed.`, the storage message is logged with the export id, an export.failed event, and nothing is left behind', async () => {
    const restore = await replaceDirectoryWithFile(path.join(api.dataDir, 'files', 'exports'));
    let id: number;
    try {
      id = await createExport(api, { documents: ['ubl'] });
      await expect.poll(async () => (await exportOf(api, id)).status, { timeout: 60_000, interval: 100 }).toBe('failed');
    } finally {
      await restore();
    }
    const failed = await exportOf(api, id);
    expect(failed.error).toBe('Storage failed.');
    // The detail is the operator's: one log line with the export's id and the storage's message.
    const logged = logLines.filter((line) => line.exportId === id && line.msg === 'an export failed');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 50, error: 'Storage failed.', directory: DIRS.baltic });
    expect((logged[0]!.err as { message: string }).message).toMatch(/^The file could not be stored: [A-Z]+/);
    expect(failed).toMatchObject({ size: null, sha256: null });
    expect(await envelopeOf(await api.call(`/exports/${id}/download`))).toMatchObject({ status: 409, message: 'Export is not ready.' });
    expect((await api.objectKeys()).filter((key) => key.startsWith('exports/'))).toEqual([]);
    expect(await exportTempFiles(api.dataDir)).toEqual([]);
    await expect
      .poll(
        async () => {
          const feed = await envelopeOf(await api.call('/events?types=export.failed&limit=500'));
          return (feed.data.events as Array<{ data: { object: { id: number; error: string } } }>).find((event) => event.data.object.id === id)?.data.object
            .error;
        },
        { timeout: 10_000 },
      )
      .toBe(failed.error);
    // With storage back, the next export succeeds.
    const next = await createExport(api, { documents: ['ubl'] });
    await expect.poll(async () => (await exportOf(api, next)).status, { timeout: 60_000, interval: 100 }).toBe('succeeded');
  });
});

describe('when the worker making an export is SIGKILLed (production)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(
      { EXPORT_LEASE_SECONDS: '2', JOB_LOCK_MS: '2000', EVENTS_PUBLISH_INTERVAL_MS: '50' },
      {
        profile: 'production',
        label: 'export-kill',
        worker: false,
        // Enough invoices that the export is surely under way, not finished, when its worker dies.
        beforeStart: async (_dataDir, { knex }) => {
          for (let i = 0; i < 80; i += 1) await insertInvoiceRow(knex, 70_000 + i, DIRS.baltic, `EXP/KILL/${i}`);
        },
      },
    );
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('then no partial archive is ever downloadable, another worker finishes it, and the archive matches its sha256', async () => {
    const env = { EXPORT_LEASE_SECONDS: '2', JOB_LOCK_MS: '2000' };
    const first = await api.stack!.startWorker(api.dataDir, env);
    const id = await createExport(api, { filters: { search: 'EXP/KILL' }, documents: ['pdf', 'cii'] });
    await expect.poll(async () => (await exportOf(api, id)).done, { timeout: 120_000, interval: 50 }).toBeGreaterThan(0);
    expect((await exportOf(api, id)).status).toBe('running');
    await first.kill();
    // While nobody makes it: still running, and nothing to download.
    expect(await envelopeOf(await api.call(`/exports/${id}/download`))).toMatchObject({ status: 409, message: 'Export is not ready.' });
    await api.stack!.startWorker(api.dataDir, env);
    await expect.poll(async () => (await exportOf(api, id)).status, { timeout: 180_000, interval: 200 }).toBe('succeeded');
    const done = await exportOf(api, id);
    expect(done.done).toBe(80);
    // The killed worker's staged archive is swept once its attempt is no longer running.
    await expect.poll(() => exportTempFiles(api.dataDir), { timeout: 30_000, interval: 200 }).toEqual([]);
    const [row] = await api.knex('exports').where({ id }).select('attempt', 'archive_key');
    expect(Number(row.attempt)).toBeGreaterThanOrEqual(2);
    expect(row.archive_key).toBe(`exports/${id}-${row.attempt}.zip`);
    // Only the finishing attempt's archive is in storage.
    expect((await api.objectKeys()).filter((key) => key.startsWith('exports/'))).toEqual([row.archive_key]);
    const bytes = Buffer.from(await (await api.call(`/exports/${id}/download`)).arrayBuffer());
    expect(bytes.length).toBe(done.size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(done.sha256);
  }, 300_000);
});
