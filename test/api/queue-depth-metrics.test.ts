import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { deleteRedisKeys } from '../support/production-stack.js';
import { freePort } from '../support/free-port.js';
import { sample, sampleLine, scrapeMetrics } from '../support/prometheus.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Queue depth in the API's metrics: SQLite and local files, but jobs through BullMQ on a real Redis, and no worker. */
describe('queue depth metrics', () => {
  const prefix = `test-depth-${randomBytes(4).toString('hex')}`;
  let api: TestApi;
  let metricsPort: number;
  let redis: Redis;
  beforeAll(async () => {
    metricsPort = await freePort();
    api = await startTestApi({ REDIS_URL, REDIS_PREFIX: prefix, METRICS_PORT: String(metricsPort), JOB_TIMEOUT_MS: '3000' }, { profile: 'embedded' });
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    await api?.stop();
    redis?.disconnect();
    await deleteRedisKeys(REDIS_URL, `${prefix}:*`);
  });

  it('when no job was sent, then every queue shows 0 jobs in every state', async () => {
    const text = await scrapeMetrics(metricsPort);
    expect(text).toContain('# TYPE logistics_queue_jobs gauge');
    for (const queue of ['pdf', 'pdf-bulk', 'uploads']) {
      for (const state of ['waiting', 'active', 'delayed', 'failed']) {
        expect(sampleLine(text, 'logistics_queue_jobs', { queue, state })).toMatch(/ 0$/);
      }
    }
  });

  it('when a PDF job waits with no worker running, then it shows as waiting on the pdf queue until the API withdraws it', async () => {
    const events = new QueueEvents('pdf', { connection: redis.duplicate(), prefix });
    try {
      await events.waitUntilReady();
      const waiting = once(events, 'waiting');
      const pending = api.call('/invoices/9001/pdf');
      await waiting;
      const during = await scrapeMetrics(metricsPort);
      expect(sample(during, 'logistics_queue_jobs', { queue: 'pdf', state: 'waiting' })).toBe(1);
      expect(sample(during, 'logistics_queue_jobs', { queue: 'uploads', state: 'waiting' })).toBe(0);
      // Nobody took it: past JOB_TIMEOUT_MS the client gets 503 and the job is taken back.
      expect((await pending).status).toBe(503);
      const after = await scrapeMetrics(metricsPort);
      expect(sample(after, 'logistics_queue_jobs', { queue: 'pdf', state: 'waiting' })).toBe(0);
    } finally {
      await events.close();
    }
  });

  it('when jobs wait with no worker running, then the oldest one’s age is exported per queue, and 0 once none waits', async () => {
    const queue = new Queue('uploads', { connection: redis, prefix });
    try {
      // Added a minute ago and just now, behind and before each other in priority: the age is the oldest one's.
      await queue.add('store-order-file', {}, { priority: 7, timestamp: Date.now() - 60_000 });
      await queue.add('store-order-file', {}, { priority: 2 });
      // An export's bulk render (priority past 2^20) waits behind requests by design: not counted, however old.
      await queue.add('store-order-file', {}, { priority: 2 ** 20 + 5, timestamp: Date.now() - 3_600_000 });
      const text = await scrapeMetrics(metricsPort);
      expect(sample(text, 'logistics_queue_oldest_job_age_seconds', { queue: 'uploads' })).toBeGreaterThanOrEqual(60);
      expect(sample(text, 'logistics_queue_oldest_job_age_seconds', { queue: 'uploads' })).toBeLessThan(90);
      expect(sampleLine(text, 'logistics_queue_oldest_job_age_seconds', { queue: 'pdf' })).toMatch(/ 0$/);
      await queue.obliterate({ force: true });
      expect(sampleLine(await scrapeMetrics(metricsPort), 'logistics_queue_oldest_job_age_seconds', { queue: 'uploads' })).toMatch(/ 0$/);
    } finally {
      await queue.close();
    }
  });

  it('when a job is delayed, then it shows as delayed', async () => {
    const queue = new Queue('uploads', { connection: redis, prefix });
    try {
      await queue.add('store-order-file', {}, { delay: 60_000 });
      expect(sample(await scrapeMetrics(metricsPort), 'logistics_queue_jobs', { queue: 'uploads', state: 'delayed' })).toBe(1);
      await queue.obliterate({ force: true });
      expect(sample(await scrapeMetrics(metricsPort), 'logistics_queue_jobs', { queue: 'uploads', state: 'delayed' })).toBe(0);
    } finally {
      await queue.close();
    }
  });
});

describe('queue depth metrics when Redis does not answer', () => {
  /** Takes connections and never answers: the worst case for a scrape, worse than a refused connect. */
  const sockets = new Set<net.Socket>();
  const silentRedis = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  let api: TestApi;
  let metricsPort: number;
  beforeAll(async () => {
    await new Promise<void>((resolve) => silentRedis.listen(0, '127.0.0.1', resolve));
    const { port } = silentRedis.address() as net.AddressInfo;
    metricsPort = await freePort();
    api = await startTestApi(
      { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: `test-silent-${randomBytes(4).toString('hex')}`, METRICS_PORT: String(metricsPort) },
      { profile: 'embedded' },
    );
  });
  afterAll(async () => {
    await api?.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silentRedis.close(() => resolve()));
  });

  it('then /metrics still answers within about a second, with the other metrics and no queue samples', async () => {
    expect((await api.call('/orders/file-categories')).status).toBe(200);
    const started = Date.now();
    const text = await scrapeMetrics(metricsPort);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(sample(text, 'http_request_duration_seconds_count', { route: '/v1/orders/file-categories', status: '200' })).toBe(1);
    expect(sampleLine(text, 'logistics_queue_jobs')).toBeUndefined();
  });
});

describe('queue depth metrics without REDIS_URL', () => {
  let api: TestApi;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    api = await startTestApi({ METRICS_PORT: String(metricsPort) }, { profile: 'embedded' });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('then there is no queue depth gauge: jobs run in the API process and never wait in a queue', async () => {
    expect(await scrapeMetrics(metricsPort)).not.toContain('logistics_queue_jobs');
  });
});
