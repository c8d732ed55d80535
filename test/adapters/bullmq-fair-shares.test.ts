import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { BullmqJobWorker, isBulkWork, QUEUE_NAME_BY_JOB } from '@logi/adapters';
import type { JobPayloads } from '@logi/domain';
import { bullmqHarness, deferred, handlers, pdfPayload, REDIS_URL } from '../support/bullmq-harness.js';

/** Fair shares between directories and the bulk queue (ADR 0036, ADR 0053), on the real Redis. */
const harness = bullmqHarness();
const { prefix, logger, opened, queue, worker, ready } = harness;

describe('BullmqJobQueue fair shares between directories', () => {
  const payloadOf = (directory: string, invoiceId: number): JobPayloads['render-invoice-pdf'] => ({ ...pdfPayload(invoiceId), directory });

  it('when one directory queues a backlog, then a job of another waits behind at most one job of each busy directory, and bulk jobs wait on their own queue in their own fair order', async () => {
    const q = queue();
    await ready(q);
    const inspect = new Queue(QUEUE_NAME_BY_JOB['render-invoice-pdf'], { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    const inspectBulk = new Queue('pdf-bulk', { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    opened.push(inspect, inspectBulk);
    const jobs: Array<Promise<unknown>> = [];
    const run = (directory: string, invoiceId: number, bulk = false) =>
      jobs.push(
        q.runAndWait('render-invoice-pdf', payloadOf(directory, invoiceId), {
          jobId: `fair-${directory}-${invoiceId}-${randomUUID()}`,
          timeoutMs: 30_000,
          bulk,
        }),
      );
    // Added in this order with no worker running: A's backlog, then B's, then exports of X and Y, then one job of C.
    const queued = async (count: number, bulk = 0) => {
      await expect.poll(() => inspect.getPrioritizedCount(), { timeout: 10_000 }).toBe(count);
      await expect.poll(() => inspectBulk.getPrioritizedCount(), { timeout: 10_000 }).toBe(bulk);
    };
    for (let i = 1; i <= 8; i++) run('A', i);
    await queued(8);
    for (let i = 1; i <= 8; i++) run('B', i);
    await queued(16);
    for (let i = 1; i <= 2; i++) run('X', i, true);
    await queued(16, 2);
    run('Y', 1, true);
    await queued(16, 3);
    run('C', 1);
    await queued(17, 3);

    const started: string[] = [];
    const render = handlers(async (p) => (started.push(`${p.directory}${p.invoiceId}`), { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' }));
    const interactiveWorker = new BullmqJobWorker({
      redis: REDIS_URL,
      prefix,
      concurrency: 1,
      logger,
      closeTimeoutMs: 5_000,
      handlers: render,
      queues: ['pdf'],
    });
    opened.push(interactiveWorker);
    await Promise.all(jobs.slice(0, 16));
    await expect.poll(() => started.length).toBe(17);
    expect(started.slice(0, 5)).toEqual(['A1', 'B1', 'C1', 'A2', 'B2']);
    // Each directory's own jobs keep their order.
    expect(started.filter((s) => s.startsWith('A'))).toEqual(Array.from({ length: 8 }, (_, i) => `A${i + 1}`));
    // A worker that does not take `pdf-bulk` leaves the exports' renders where they wait.
    expect(await inspectBulk.getPrioritizedCount()).toBe(3);

    const bulkWorker = new BullmqJobWorker({ redis: REDIS_URL, prefix, concurrency: 1, logger, closeTimeoutMs: 5_000, handlers: render, queues: ['pdf-bulk'] });
    opened.push(bulkWorker);
    await Promise.all(jobs);
    expect(started.slice(17)).toEqual(['X1', 'Y1', 'X2']);
  });

  it('when an older release put an export render on `pdf` with a bulk priority, then a worker that takes `pdf` runs it, as bulk work', async () => {
    const legacy = new Queue(QUEUE_NAME_BY_JOB['render-invoice-pdf'], { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    opened.push(legacy);
    const seen: Array<{ invoiceId: number; bulk: boolean }> = [];
    await worker(handlers(async (p) => (seen.push({ invoiceId: p.invoiceId, bulk: isBulkWork() }), { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' })));
    // What a release before ADR 0053 added for an export: the render job on `pdf`, its priority above 2^20.
    await legacy.add('render-invoice-pdf', payloadOf('OLD', 41), { jobId: `legacy-${randomUUID()}`, priority: 2 ** 20 + 1 });
    await legacy.add('render-invoice-pdf', payloadOf('OLD', 42), { jobId: `legacy-${randomUUID()}`, priority: 1 });
    await expect.poll(() => seen.length).toBe(2);
    expect(seen.sort((a, b) => a.invoiceId - b.invoiceId)).toEqual([
      { invoiceId: 41, bulk: true },
      { invoiceId: 42, bulk: false },
    ]);
  });

  it('when a worker takes both render queues, then a bulk backlog holds at most WORKER_CONCURRENCY - 1 slots and requests start beside it', async () => {
    const q = queue();
    await ready(q);
    const running = { bulk: 0, interactive: 0, maxBulk: 0 };
    const gate = deferred();
    await worker(
      handlers(async (p) => {
        const kind = isBulkWork() ? 'bulk' : 'interactive';
        running[kind] += 1;
        running.maxBulk = Math.max(running.maxBulk, running.bulk);
        await gate.promise;
        running[kind] -= 1;
        return { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' };
      }),
    );
    const run = (invoiceId: number, bulk: boolean) =>
      q.runAndWait('render-invoice-pdf', payloadOf(bulk ? 'X' : 'A', invoiceId), { jobId: `slots-${invoiceId}-${randomUUID()}`, timeoutMs: 30_000, bulk });
    const bulkJobs = [1, 2, 3, 4].map((i) => run(i, true));
    await expect.poll(() => running.bulk).toBe(1);
    const requests = [11, 12].map((i) => run(i, false));
    // Both requests run while the bulk backlog still waits: its one slot stays its one slot.
    await expect.poll(() => running.interactive).toBe(2);
    expect(running.bulk).toBe(1);
    gate.resolve();
    await Promise.all([...bulkJobs, ...requests]);
    expect(running.maxBulk).toBe(1);
  });
});
