import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Knex } from 'knex';
import { EventLoopWatch } from '@logi/adapters';
import { Tokens } from '@logi/api';
import { SERVICE_VERSION } from '@logi/config';
import type { FileStoragePort } from '@logi/domain';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { replaceDirectoryWithFile } from '../support/break-storage.js';
import { freePort } from '../support/free-port.js';

/** The storage's pings (the readiness probe's storage check): how many ran, and most at once. */
const pings = { total: 0, running: 0, mostAtOnce: 0 };

/** The real storage, with its pings counted. */
function countingPings(storage: FileStoragePort): FileStoragePort {
  return new Proxy(storage, {
    get(target, property) {
      if (property === 'ping') {
        return async () => {
          pings.total += 1;
          pings.running += 1;
          pings.mostAtOnce = Math.max(pings.mostAtOnce, pings.running);
          try {
            return await target.ping();
          } finally {
            pings.running -= 1;
          }
        };
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

let api: TestApi;
beforeAll(async () => {
  // A limit of one: any request the limiter counted would be refused from the second on.
  api = await startTestApi(
    { RATE_LIMIT_MAX: '1' },
    {
      profile: 'embedded',
      beforeStart: async (_dataDir, { container }) => {
        const storage = container.get<FileStoragePort>(Tokens.FileStorage);
        container.unbind(Tokens.FileStorage);
        container.bind(Tokens.FileStorage).toConstantValue(countingPings(storage));
      },
    },
  );
});
afterAll(async () => {
  await api?.stop();
});

describe('GET /health/live', () => {
  it('when the process answers, then 200 envelope without credentials', async () => {
    const response = await fetch(`${api.root}/health/live`);
    expect(response.status).toBe(200);
    const body = await envelopeOf(response);
    expect(body).toMatchObject({ status: 200, message: 'OK', data: { status: 'live' } });
    expect(body.data.uptime_seconds).toBeGreaterThanOrEqual(0);
    expect(body.data.event_loop_delay_ms).toBeGreaterThanOrEqual(0);
    expect(body.data.version).toBe(SERVICE_VERSION);
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('GET /health/ready (embedded profile)', () => {
  it('when every dependency answers, then 200 ready with a check per dependency, the PDF renderer included in the embedded profile, and nothing degraded', async () => {
    const response = await fetch(`${api.root}/health/ready`);
    expect(response.status).toBe(200);
    expect(await envelopeOf(response)).toEqual({
      status: 200,
      message: 'OK',
      data: { status: 'ready', checks: { database: 'ok', storage: 'ok', job_queue: 'ok', pdf_renderer: 'ok' }, degraded: [] },
    });
  });

  it('when called many times with a rate limit of 1, then every call is 200 and none is counted', async () => {
    for (let i = 0; i < 10; i += 1) {
      for (const probe of ['/health/live', '/health/ready']) {
        const response = await fetch(`${api.root}${probe}`);
        expect(response.status).toBe(200);
        expect(response.headers.get('x-ratelimit-limit')).toBeNull();
        await response.arrayBuffer();
      }
    }
    // The limiter is still untouched: the first counted request of this client goes through.
    expect((await api.call('/orders/file-categories')).status).toBe(200);
    expect((await api.call('/orders/file-categories')).status).toBe(429);
  });

  it('when many calls come at once and for a while, then one probe runs at a time, at most about one a second, and every call answers 200', async () => {
    const before = pings.total;
    pings.mostAtOnce = 0;
    const started = Date.now();
    const statuses: number[] = [];
    // 20 callers, each asking again as soon as it is answered, for 2.5 s.
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (Date.now() - started < 2_500) {
          const response = await fetch(`${api.root}/health/ready`);
          statuses.push(response.status);
          await response.arrayBuffer();
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const probes = pings.total - before;
    expect(statuses.length).toBeGreaterThan(40);
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(pings.mostAtOnce).toBe(1);
    expect(probes).toBeGreaterThanOrEqual(1);
    expect(probes).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
  });

  it('when the storage cannot be written, then still 200 with storage reported degraded within a second and a probe (uploads need it, lists do not); the degraded entry clears once it heals', async () => {
    // The storage check's probe takes up to its 2 s timeout (it retries a fast failure); a report lives 1 s.
    const SHOWS_WITHIN_MS = 1_000 + 2_000 + 1_500;
    const restore = await replaceDirectoryWithFile(path.join(api.dataDir, 'files'));
    let restored = false;
    try {
      const broken = Date.now();
      const statuses = new Set<number>();
      const body = await vi.waitFor(
        async () => {
          const answer = await fetch(`${api.root}/health/ready`);
          statuses.add(answer.status);
          const parsed = await envelopeOf(answer);
          if (parsed.data.status !== 'degraded') throw new Error(`still ${JSON.stringify(parsed.data)}`);
          return parsed;
        },
        { timeout: SHOWS_WITHIN_MS, interval: 50 },
      );
      expect(Date.now() - broken).toBeLessThan(SHOWS_WITHIN_MS);
      expect([...statuses]).toEqual([200]);
      expect(body).toEqual({
        status: 200,
        message: 'OK',
        data: { status: 'degraded', checks: { database: 'ok', storage: 'failed', job_queue: 'ok', pdf_renderer: 'ok' }, degraded: ['storage'] },
      });
      expect(JSON.stringify(body)).not.toContain(api.dataDir);
      // Lists are served meanwhile: the probe said so rightly.
      expect((await api.call('/invoices?per_page=1', { as: 'alpine' })).status).toBe(200);
      await restore();
      restored = true;
      const healed = Date.now();
      await vi.waitFor(
        async () => {
          const answer = await envelopeOf(await fetch(`${api.root}/health/ready`));
          if (answer.data.status !== 'ready') throw new Error(`still ${JSON.stringify(answer.data)}`);
          expect(answer.data.degraded).toEqual([]);
        },
        { timeout: SHOWS_WITHIN_MS, interval: 50 },
      );
      expect(Date.now() - healed).toBeLessThan(SHOWS_WITHIN_MS);
    } finally {
      if (!restored) await restore();
    }
  });

  it('when HEAD is sent, then it answers like GET without a body', async () => {
    const response = await fetch(`${api.root}/health/live`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });
});

describe('GET /health/ready with the database gone (embedded profile)', () => {
  let broken: TestApi;
  beforeAll(async () => {
    broken = await startTestApi({}, { profile: 'embedded' });
  });
  afterAll(async () => {
    await broken?.stop();
  });

  it('when the database connection is destroyed, then 503 not ready naming the database, with Retry-After, while live stays 200', async () => {
    await broken.container.get<Knex>(Tokens.Knex).destroy();
    const response = await fetch(`${broken.root}/health/ready`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    const body = await envelopeOf(response);
    expect(body.message).toBe('Service Unavailable: database');
    expect(body.data).toEqual({
      status: 'not ready',
      checks: { database: 'failed', storage: 'ok', job_queue: 'ok', pdf_renderer: 'ok' },
      failing: ['database'],
      degraded: [],
    });
    expect((await fetch(`${broken.root}/health/live`)).status).toBe(200);
  });
});

describe('GET /health/ready in the production profile (MariaDB, Redis, S3)', () => {
  it('when everything answers, then the queue and Redis are checked instead of an in-process renderer; when S3 goes away, still 200 with storage degraded', async () => {
    const production = await startTestApi({}, { profile: 'production', label: 'health', worker: false });
    try {
      const response = await fetch(`${production.root}/health/ready`);
      const body = await envelopeOf(response);
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body.data).toEqual({ status: 'ready', checks: { database: 'ok', storage: 'ok', job_queue: 'ok', redis: 'ok' }, degraded: [] });

      await production.stack!.s3.stop();
      // A report lives about a second: the next probe finds S3 gone.
      const down = await vi.waitFor(
        async () => {
          const answer = await fetch(`${production.root}/health/ready`);
          const parsed = { status: answer.status, body: await envelopeOf(answer) };
          if (parsed.body.data.status === 'ready') throw new Error(`still ${JSON.stringify(parsed.body.data)}`);
          return parsed;
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(down.status).toBe(200);
      expect(down.body.data).toEqual({
        status: 'degraded',
        checks: { database: 'ok', storage: 'failed', job_queue: 'ok', redis: 'ok' },
        degraded: ['storage'],
      });
    } finally {
      await production.stop();
    }
  });

  it('when nothing listens at REDIS_URL, then 200 with the queue and Redis degraded, within the check timeout', async () => {
    const closedPort = await freePort();
    const noRedis = await startTestApi({ REDIS_URL: `redis://127.0.0.1:${closedPort}` }, { profile: 'embedded' });
    try {
      const started = Date.now();
      const response = await fetch(`${noRedis.root}/health/ready`);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(response.status).toBe(200);
      const body = await envelopeOf(response);
      expect(body.data.status).toBe('degraded');
      expect(body.data.degraded).toEqual(['job_queue', 'redis']);
      expect(body.data.checks).toMatchObject({ database: 'ok', storage: 'ok' });
      expect(['failed', 'timeout']).toContain(body.data.checks.job_queue);
      expect(['failed', 'timeout']).toContain(body.data.checks.redis);
    } finally {
      await noRedis.stop();
    }
  });
});

describe('GET /health/live when the event loop cannot keep time (embedded profile)', () => {
  /** A tight watch, so a test can starve the loop for a moment: every turn later than 100 ms for 400 ms is "not live". */
  const WATCH = { intervalMs: 20, boundMs: 100, windowMs: 400 };
  let starved: TestApi;
  beforeAll(async () => {
    starved = await startTestApi(
      {},
      {
        profile: 'embedded',
        beforeStart: async (_dataDir, { container }) => {
          container.unbind(Tokens.Liveness);
          container.bind(Tokens.Liveness).toConstantValue(new EventLoopWatch(WATCH).start());
        },
      },
    );
  });
  afterAll(async () => {
    await starved?.stop();
  });

  async function live(): Promise<{ status: number; data: any; message: string }> {
    const response = await fetch(`${starved.root}/health/live`);
    const body = await envelopeOf(response);
    return { status: response.status, data: body.data, message: body.message };
  }

  it('when every turn of the loop comes late beyond the bound for the whole window, then 503 not live with the delay; once the loop keeps time again, 200 live', async () => {
    // Work that holds the loop 150 ms at a time, again and again (a CPU-bound handler under load, say).
    const hog = setInterval(() => {
      const until = Date.now() + 150;
      while (Date.now() < until);
    }, 1);
    try {
      const answer = await vi.waitFor(
        async () => {
          const seen = await live();
          if (seen.status !== 503) throw new Error(`still ${seen.status}`);
          return seen;
        },
        { timeout: 10_000, interval: 10 },
      );
      expect(answer.message).toBe('Service Unavailable: event_loop');
      expect(answer.data.status).toBe('not live');
      expect(answer.data.event_loop_delay_ms).toBeGreaterThan(WATCH.boundMs);
    } finally {
      clearInterval(hog);
    }
    await vi.waitFor(
      async () => {
        const seen = await live();
        if (seen.status !== 200) throw new Error(`still ${seen.status}`);
        expect(seen.data.status).toBe('live');
      },
      { timeout: 5_000, interval: 20 },
    );
  });
});
