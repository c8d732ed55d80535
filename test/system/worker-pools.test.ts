import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { insertInvoiceRow } from '../support/sql-writes.js';
import { DIRS } from '../support/test-fixture.js';
import { WITHOUT_CAP_SYS_NICE, WorkerProcess } from '../support/worker-process.js';
import { descendantsOf, isChromium, readProcess } from '../support/process-tree.js';

/**
 * Worker pools (WORKER_QUEUES, docs/contribute/decisions/0053-worker-pools.md), production profile: one worker for
 * what clients wait for, one for exports.
 */
const INVOICES = 6;

function jobsStarted(worker: WorkerProcess, queue: string): number {
  return worker.logs.filter((line) => line.msg === 'job started' && line.queue === queue).length;
}

describe('when one worker takes WORKER_QUEUES=interactive and another WORKER_QUEUES=bulk', () => {
  let api: TestApi;
  let interactive: WorkerProcess;
  let bulk: WorkerProcess;
  beforeAll(async () => {
    api = await startTestApi(
      { EVENTS_PUBLISH_INTERVAL_MS: '50' },
      {
        profile: 'production',
        label: 'worker-pools',
        worker: false,
        beforeStart: async (_dataDir, { knex }) => {
          for (let i = 0; i < INVOICES; i += 1) await insertInvoiceRow(knex, 71_000 + i, DIRS.baltic, `EXP/POOL/${i}`);
        },
      },
    );
    // As the image runs them (USER node): without CAP_SYS_NICE, which root has and Chromium would use to set its own.
    interactive = await api.stack!.startWorker(api.dataDir, { WORKER_QUEUES: 'interactive' }, { runUnder: WITHOUT_CAP_SYS_NICE });
    bulk = await api.stack!.startWorker(api.dataDir, { WORKER_QUEUES: 'bulk' }, { runUnder: WITHOUT_CAP_SYS_NICE });
  }, 180_000);
  afterAll(async () => {
    await api?.stop();
  });

  it("then the export's renders run on the bulk worker only, and a client's PDF on the interactive one", async () => {
    const created = await envelopeOf(
      await api.call('/exports', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ filters: { search: 'EXP/POOL' }, documents: ['pdf'] }),
      }),
    );
    expect(created.status).toBe(202);
    const pdf = await api.call('/invoices/9001/pdf?lang=de');
    expect(pdf.status).toBe(200);
    await expect
      .poll(async () => (await envelopeOf(await api.call(`/exports/${created.data.id as number}`))).data.status, { timeout: 180_000, interval: 200 })
      .toBe('succeeded');
    expect((await envelopeOf(await api.call(`/exports/${created.data.id as number}`))).data.done).toBe(INVOICES);
    expect(jobsStarted(bulk, 'pdf-bulk')).toBe(INVOICES);
    expect(jobsStarted(bulk, 'pdf')).toBe(0);
    expect(jobsStarted(interactive, 'pdf-bulk')).toBe(0);
    expect(jobsStarted(interactive, 'pdf')).toBe(1);
    expect(bulk.logs.find((line) => line.msg === 'worker started')?.queues).toEqual(['pdf-bulk', 'exports']);
    expect(interactive.logs.find((line) => line.msg === 'worker started')?.queues).toEqual(['pdf', 'uploads', 'webhooks', 'events']);
  }, 240_000);

  it('then the bulk worker and its Chromium run at nice 10, yielding the cores, and the interactive one and its Chromium at the nice they were given', () => {
    const given = readProcess(process.pid)!.nice;
    expect(readProcess(bulk.pid)!.nice).toBe(Math.max(given, 10));
    expect(bulk.logs.find((line) => line.msg === 'worker started')?.nice).toBe(Math.max(given, 10));
    const bulkChromium = descendantsOf(bulk.pid).filter(isChromium);
    // It rendered the export's PDFs (the test above), so its browser is running.
    expect(bulkChromium.length).toBeGreaterThan(0);
    expect(new Set(bulkChromium.map((p) => p.nice))).toEqual(new Set([Math.max(given, 10)]));
    expect(readProcess(interactive.pid)!.nice).toBe(given);
    // Chromium raises the nice of renderers it sees as idle by 5 (allowed without privilege); none goes to the bulk level.
    const interactiveNice = descendantsOf(interactive.pid)
      .filter(isChromium)
      .map((p) => p.nice);
    expect(interactiveNice).toContain(given);
    expect(interactiveNice.every((nice) => nice === given || nice === given + 5)).toBe(true);
  });

  it('when WORKER_QUEUES names a queue that does not exist, then the worker stops at start with one line naming WORKER_QUEUES', async () => {
    const failure = await WorkerProcess.start({ ...api.stack!.env, DATA_DIR: api.dataDir, WORKER_QUEUES: 'pdf,pdf-exports' }).then(
      () => new Error('the worker started'),
      (error: Error) => error,
    );
    const stderr = failure.message.replace(/^worker exited with 1: /, '');
    expect(failure.message).toMatch(/^worker exited with 1: /);
    expect(stderr.trim().split('\n')).toEqual([expect.stringContaining('WORKER_QUEUES')]);
    expect(stderr).toContain('(got "pdf-exports")');
  }, 60_000);
});
