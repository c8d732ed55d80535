import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BullmqJobQueue, BullmqJobWorker, createRedis, whenRedisReady } from '@logi/adapters';
import type { RedisEndpoint } from '@logi/config';
import type { JobHandlers } from '@logi/domain';
import { PrivateSentinelGroup } from '../support/private-sentinel.js';

/**
 * Connections made by createRedis through a private Sentinel group (a
 * primary, a replica, three sentinels), and what they do when the master
 * fails over: real processes, a real SENTINEL FAILOVER.
 */

let group: PrivateSentinelGroup;
let endpoint: RedisEndpoint;
const opened: Array<{ close(): Promise<void> } | Redis> = [];

/** A failover moves every connection within this (sentinel's switch, then ioredis's reconnect, backoff capped at 2 s). */
const RECONNECT_BOUND_MS = 5_000;

beforeAll(async () => {
  group = await PrivateSentinelGroup.start();
  endpoint = { sentinels: group.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })), name: group.name, url: null };
}, 60_000);

afterEach(async () => {
  for (const o of opened.splice(0)) {
    if ('disconnect' in o) o.disconnect();
    else await o.close();
  }
});

afterAll(async () => {
  await group?.stop();
});

function client(where: RedisEndpoint = endpoint): Redis {
  const redis = createRedis(where, { role: 'client', connectionName: 'sentinel-test' });
  opened.push(redis);
  return redis;
}

/** The port of the server a connection is on, as that server reports it. */
async function serverPort(redis: Redis): Promise<number> {
  const info = await redis.info('server');
  return Number(/tcp_port:(\d+)/.exec(info)![1]);
}

describe('createRedis through Sentinel', () => {
  it('when connected through the sentinels, then the connection is on the master they name, and REDIS_URL gives the database', async () => {
    const master = await group.master();
    const redis = client();
    expect(await whenRedisReady(redis, 5_000)).toBe(true);
    expect(await serverPort(redis)).toBe(master.port);
    expect(/role:(\w+)/.exec(await redis.info('replication'))![1]).toBe('master');

    // The URL's host and port are not used (nothing listens on port 1); its database is.
    const db5 = client({ ...endpoint, url: 'redis://127.0.0.1:1/5' });
    expect(await whenRedisReady(db5, 5_000)).toBe(true);
    const key = `sentinel-test:${randomUUID()}`;
    await db5.set(key, 'in db 5', 'PX', 60_000);
    expect(await redis.get(key)).toBeNull();
    expect(await db5.get(key)).toBe('in db 5');
    expect((await master.info('keyspace')).db5).toMatch(/^keys=\d+/);
  });

  it('when a disconnect lands while the connection asks the sentinels for the master (what the failover detector of ioredis does on +switch-master), then ioredis ends it for good, and createRedis connects it again once the sentinels answer', async () => {
    const redis = client();
    expect(await whenRedisReady(redis, 5_000)).toBe(true);
    const statuses: string[] = [];
    for (const status of ['end', 'ready'] as const) redis.on(status, () => statuses.push(status));
    // Sentinels that accept and never answer hold the connection in its master lookup.
    await Promise.all(group.sentinels.map((s) => s.pause()));
    try {
      redis.disconnect(true);
      await vi.waitFor(() => expect(redis.status).toBe('connecting'), { timeout: 5_000, interval: 5 });
      (redis as unknown as { connector: { disconnect(): void } }).connector.disconnect();
      // ioredis' terminal state: without createRedis' guard it stays there, whatever the sentinels do later.
      await vi.waitFor(() => expect(statuses).toContain('end'), { timeout: 5_000, interval: 10 });
    } finally {
      await Promise.all(group.sentinels.map((s) => s.resume()));
    }
    const resumedAt = Date.now();
    await vi.waitFor(() => expect(redis.status).toBe('ready'), { timeout: RECONNECT_BOUND_MS, interval: 20 });
    expect(Date.now() - resumedAt).toBeLessThan(RECONNECT_BOUND_MS);
    expect(await redis.ping()).toBe('PONG');
    expect(statuses.indexOf('ready')).toBeGreaterThan(statuses.indexOf('end'));
  });

  it('when the master fails over (SENTINEL FAILOVER), then writes go to the new master within a bound, with no new connection made by the caller', async () => {
    const redis = client();
    expect(await whenRedisReady(redis, 5_000)).toBe(true);
    const key = `sentinel-test:${randomUUID()}`;
    let stop = false;
    const failures: number[] = [];
    let written = 0;
    // A write every 20 ms through the failover: each either lands or fails at once (client role: no offline queue).
    const writer = (async () => {
      while (!stop) {
        const started = Date.now();
        await redis.incr(key).then(
          () => (written += 1),
          () => failures.push(Date.now()),
        );
        expect(Date.now() - started).toBeLessThan(2_500);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const { from, to, switchedMs } = await group.failover();
    expect(to.port).not.toBe(from.port);
    // Once the sentinels name the new master, the same connection writes there within the bound.
    const switchedAt = Date.now();
    await expect
      .poll(
        async () =>
          await redis
            .incr(key)
            .then(() => serverPort(redis))
            .catch(() => 0),
        { timeout: RECONNECT_BOUND_MS, interval: 50 },
      )
      .toBe(to.port);
    const movedMs = Date.now() - switchedAt;
    stop = true;
    await writer;
    // The old master is a replica of the new one now, and the counter went on there.
    await group.untilSettled(30_000);
    expect((await from.info('replication')).role).toBe('slave');
    expect(Number(await to.command(['GET', key]))).toBeGreaterThan(0);
    const window = failures.length ? failures[failures.length - 1]! - failures[0]! : 0;
    console.info(
      `failover: sentinels switched in ${switchedMs} ms; the connection wrote on the new master ${movedMs} ms later; ${failures.length} failed writes over ${window} ms, ${written} written`,
    );
  }, 60_000);

  it('when the master fails over, then BullMQ jobs sent before and after it run, and the worker takes jobs from the new master without a restart', async () => {
    const prefix = `test-sentinel-${randomUUID().slice(0, 8)}`;
    const handlers: JobHandlers = {
      'render-invoice-pdf': async (payload) => ({ pdfKey: payload.pdfKey, bytes: 1, invoiceNr: `FV/${payload.invoiceId}` }),
      'store-order-file': async () => ({ fileId: 1 }),
    };
    const worker = new BullmqJobWorker({ redis: endpoint, prefix, handlers, concurrency: 2, logger: pino({ level: 'silent' }), closeTimeoutMs: 5_000 });
    opened.push(worker);
    await worker.waitUntilReady();
    const queue = new BullmqJobQueue({ redis: endpoint, prefix, backoffMs: 20 });
    opened.push(queue);
    const run = (invoiceId: number) =>
      queue.runAndWait(
        'render-invoice-pdf',
        {
          directory: 'ACME',
          invoiceId,
          deadline: Date.now() + 60_000,
          lang: 'de',
          duplicate: false,
          pdfKey: `pdf/${randomUUID()}.pdf`,
          requestId: `req-${invoiceId}`,
        },
        { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 },
      );
    await expect
      .poll(
        () =>
          run(1).then(
            (r) => r.invoiceNr,
            () => 'unavailable',
          ),
        { timeout: 10_000, interval: 100 },
      )
      .toBe('FV/1');

    const { to } = await group.failover();
    // Jobs during the switch may be refused (503); within the bound they run again, on the new master.
    const started = Date.now();
    await expect
      .poll(
        () =>
          run(2).then(
            (r) => r.invoiceNr,
            () => 'unavailable',
          ),
        { timeout: 15_000, interval: 100 },
      )
      .toBe('FV/2');
    console.info(`BullMQ: a job ran again ${Date.now() - started} ms after the sentinels switched`);
    // The queue's keys are on the new master: the job above went through it.
    const keys = (await to.command(['KEYS', `${prefix}:*`])) as string[];
    expect(keys.length).toBeGreaterThan(0);
    for (let i = 3; i < 8; i++) expect((await run(i)).invoiceNr).toBe(`FV/${i}`);
    await group.untilSettled(30_000);
  }, 90_000);
});
