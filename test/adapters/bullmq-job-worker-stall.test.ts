import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Worker } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BullmqJobQueue, BullmqJobWorker, type Generation } from '@logi/adapters';
import type { JobHandlers, JobPayloads } from '@logi/domain';
import { capturedLog } from '../support/captured-log.js';
import { pdfKeyOf } from '../support/job-keys.js';

/**
 * The worker's stall watchdog against the real Redis: a worker that stops
 * taking jobs while they wait (after a Sentinel failover, one was seen idle
 * for 48 s) makes its connection and BullMQ workers anew, and reports itself
 * not live when even that does not help. The stand-in for a connection left
 * in a terminal state is BullMQ's own pause: the process runs, jobs wait,
 * none is taken, which is all the watchdog looks at.
 */

const REDIS_URL = 'redis://127.0.0.1:6379';
const prefix = `test-stall-${randomUUID().slice(0, 8)}`;
/** Tight bounds, so the test takes seconds: recreate after 600 ms of starving, not live after 2 s. */
const STALL = { checkIntervalMs: 100, recreateAfterMs: 600, notLiveAfterMs: 2_000 };
const { logger, lines } = capturedLog();
const opened: Array<{ close(): Promise<void> }> = [];
let admin: Redis;

const payload = (invoiceId: number): JobPayloads['render-invoice-pdf'] => ({
  directory: 'ACME',
  invoiceId,
  deadline: Date.UTC(2100, 0, 1),
  lang: 'de',
  duplicate: true,
  pdfKey: pdfKeyOf(invoiceId),
  requestId: `req-${invoiceId}`,
});

const handlers: JobHandlers = {
  'render-invoice-pdf': async ({ pdfKey }) => ({ pdfKey, bytes: 1, invoiceNr: 'FV/1' }),
  'store-order-file': async () => ({ fileId: 1 }),
};

/** The BullMQ workers the job worker runs now (the watchdog replaces them). */
function bullmqWorkers(worker: BullmqJobWorker): Worker[] {
  return (worker as unknown as { current: { workers: Worker[] } }).current.workers;
}

async function stallWorkers(worker: BullmqJobWorker): Promise<void> {
  await Promise.all(bullmqWorkers(worker).map((w) => w.pause(true)));
}

/** A worker whose every set of BullMQ workers, the new ones too, takes no job: a connection that cannot recover. */
class NeverTakingWorker extends BullmqJobWorker {
  protected override makeGeneration(): Generation {
    const generation = super.makeGeneration();
    for (const w of generation.workers) void w.pause(true);
    return generation;
  }
}

async function start(Kind: typeof BullmqJobWorker = BullmqJobWorker): Promise<{ worker: BullmqJobWorker; queue: BullmqJobQueue }> {
  const worker = new Kind({ redis: REDIS_URL, prefix, handlers, concurrency: 1, logger, closeTimeoutMs: 2_000, stall: STALL });
  const queue = new BullmqJobQueue({ redis: REDIS_URL, prefix });
  opened.push(queue, worker);
  await worker.waitUntilReady();
  return { worker, queue };
}

beforeAll(async () => {
  admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  await admin.ping();
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close()));
});

afterAll(async () => {
  const keys = await admin.keys(`${prefix}:*`);
  if (keys.length) await admin.del(...keys);
  await admin.quit();
});

describe('BullmqJobWorker, when it stops taking jobs', () => {
  it('when a job waits while the worker has a free slot and takes none, then the worker makes its connection and workers anew and the job is served, and it stays live', async () => {
    const { worker, queue } = await start();
    expect((await queue.runAndWait('render-invoice-pdf', payload(1), { timeoutMs: 5_000, jobId: randomUUID() })).pdfKey).toBe(pdfKeyOf(1));
    await stallWorkers(worker);
    const stalledAt = Date.now();
    const result = await queue.runAndWait('render-invoice-pdf', payload(2), { timeoutMs: 10_000, jobId: randomUUID() });
    const servedMs = Date.now() - stalledAt;
    expect(result.pdfKey).toBe(pdfKeyOf(2));
    // Served by the new workers: after the bound, well within one more check and a job's run.
    expect(servedMs).toBeGreaterThanOrEqual(STALL.recreateAfterMs);
    expect(servedMs).toBeLessThan(STALL.recreateAfterMs + 3_000);
    expect(worker.stallState().recreations).toBe(1);
    expect(worker.live()).toBe(true);
    const remade = lines.filter((l) => String(l.msg).includes('making its Redis connection and workers anew'));
    expect(remade.at(-1)).toMatchObject({ level: 50, queues: ['pdf'], recreations: 1 });
    await vi.waitFor(() => expect(worker.stallState().stalledMs).toBeNull(), { timeout: 2_000, interval: 50 });
  });

  it('when even the new workers take no job, then live() turns false after the bound; once a job is taken, live again', async () => {
    const { worker, queue } = await start(NeverTakingWorker);
    const startedAt = Date.now();
    const waiting = queue.runAndWait('render-invoice-pdf', payload(3), { timeoutMs: 20_000, jobId: randomUUID() });
    await vi.waitFor(() => expect(worker.live()).toBe(false), { timeout: STALL.notLiveAfterMs + 2_000, interval: 20 });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(STALL.notLiveAfterMs);
    // Made anew every 600 ms meanwhile, none of it helped.
    expect(worker.stallState().recreations).toBeGreaterThanOrEqual(2);
    await vi.waitFor(() => expect(lines.filter((l) => l.msg === 'worker still takes no jobs: reporting not live')).toHaveLength(1), {
      timeout: 2_000,
      interval: 20,
    });
    await Promise.all(bullmqWorkers(worker).map((w) => w.resume()));
    expect((await waiting).pdfKey).toBe(pdfKeyOf(3));
    await vi.waitFor(() => expect(worker.live()).toBe(true), { timeout: 2_000, interval: 20 });
  });

  it('when no job waits, then an idle worker is never counted as stalled', async () => {
    const { worker } = await start();
    await stallWorkers(worker);
    const checksBefore = worker.stallState().checks;
    // Ten checks with nothing waiting: longer than the bound to make it anew.
    await vi.waitFor(() => expect(worker.stallState().checks).toBeGreaterThanOrEqual(checksBefore + 10), { timeout: 5_000, interval: 50 });
    expect(worker.stallState()).toMatchObject({ stalledMs: null, recreations: 0 });
    expect(worker.live()).toBe(true);
  });
});
