import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import { BullmqJobQueue, BullmqJobWorker } from '@logi/adapters';
import type { JobHandlers, JobPayloads } from '@logi/domain';
import { capturedLog } from './captured-log.js';
import { pdfKeyOf } from './job-keys.js';

export const REDIS_URL = 'redis://127.0.0.1:6379';

export const pdfPayload = (invoiceId: number, requestId = 'req-test'): JobPayloads['render-invoice-pdf'] => ({
  directory: 'ACME',
  invoiceId,
  deadline: Date.UTC(2100, 0, 1),
  lang: 'de',
  duplicate: true,
  pdfKey: pdfKeyOf(invoiceId),
  requestId,
});

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export function handlers(render: JobHandlers['render-invoice-pdf'], store?: JobHandlers['store-order-file']): JobHandlers {
  return { 'render-invoice-pdf': render, 'store-order-file': store ?? (async () => ({ fileId: 1 })) };
}

/**
 * BullMQ queues and workers on the real Redis under a key prefix of the test file's own: what it opens is closed
 * after each test, and every key of the prefix is removed after the file (and checked gone). Call once, at the top of
 * a test file: it registers the hooks.
 */
export function bullmqHarness() {
  const prefix = `test-${randomUUID().slice(0, 8)}`;
  const opened: Array<{ close(): Promise<void> }> = [];
  const { logger, lines: logLines } = capturedLog();
  let admin!: Redis;

  beforeAll(async () => {
    admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    await admin.ping();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((o) => o.close()));
  });
  afterAll(async () => {
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length) await admin.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    expect(await admin.keys(`${prefix}:*`)).toEqual([]);
    await admin.quit();
  });

  return {
    prefix,
    logger,
    logLines,
    /** A plain connection for looking at the prefix's keys. */
    admin: () => admin,
    /** Closed after the test. */
    opened,
    queue: (overrides: Partial<ConstructorParameters<typeof BullmqJobQueue>[0]> = {}): BullmqJobQueue => {
      const q = new BullmqJobQueue({ redis: REDIS_URL, prefix, backoffMs: 20, ...overrides });
      opened.push(q);
      return q;
    },
    worker: async (h: JobHandlers): Promise<BullmqJobWorker> => {
      const w = new BullmqJobWorker({ redis: REDIS_URL, prefix, handlers: h, concurrency: 2, logger, closeTimeoutMs: 5_000 });
      opened.push(w);
      await w.waitUntilReady();
      return w;
    },
    /** Waits until the queue's client connection is ready, by the readiness check itself. */
    ready: async (q: BullmqJobQueue): Promise<void> => {
      await vi.waitFor(() => q.ping(), { timeout: 5_000, interval: 20 });
    },
  };
}
