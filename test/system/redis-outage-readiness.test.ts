import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { PrivateRedis } from '../support/private-services.js';
import { PrivateStack } from '../support/private-stack.js';
import { WorkerProcess } from '../support/worker-process.js';

/**
 * What the probes say when a dependency goes away under the production
 * profile (private MariaDB, Redis and S3 server; the API in this process, a
 * worker in its own): Redis gone leaves the API ready and serving lists, with
 * Redis reported as degraded, which clears when Redis is back; the database
 * gone makes it unready, naming the database (docs/operate/runbook.md#probes).
 */

/** A readiness report lives 1 s and a check takes at most its 2 s timeout (observability.md), plus a loaded machine's slack. */
const SHOWS_WITHIN_MS = 1_000 + 2_000 + 2_000;
/** After Redis is back: ioredis' reconnect backoff (at most 2 s) before the checks see it. */
const CLEARS_WITHIN_MS = 2_000 + SHOWS_WITHIN_MS;
const JOB_TIMEOUT_MS = 8_000;

let stack: PrivateStack;
let api: TestApi;
let worker: WorkerProcess;
let workerDir: string;
let restartedRedis: PrivateRedis | null = null;

interface Probe {
  status: number;
  retryAfter: string | null;
  message: string;
  data: any;
}

async function probe(which: 'live' | 'ready'): Promise<Probe> {
  const response = await fetch(`${api.root}/health/${which}`);
  const body = await envelopeOf(response);
  return { status: response.status, retryAfter: response.headers.get('retry-after'), message: body.message, data: body.data };
}

/** Polls /health/ready until `done` holds; every answer on the way is kept, so a test can say what the probe never answered. */
async function readyUntil(done: (p: Probe) => boolean, withinMs: number): Promise<{ last: Probe; seen: Probe[]; ms: number }> {
  const seen: Probe[] = [];
  const started = Date.now();
  const last = await vi.waitFor(
    async () => {
      const answer = await probe('ready');
      seen.push(answer);
      if (!done(answer)) throw new Error(`not yet: ${answer.status} ${JSON.stringify(answer.data)}`);
      return answer;
    },
    { timeout: withinMs, interval: 100 },
  );
  return { last, seen, ms: Date.now() - started };
}

beforeAll(async () => {
  stack = await PrivateStack.start();
  const env = { ...stack.env, JOB_TIMEOUT_MS: String(JOB_TIMEOUT_MS), PDF_CACHE_MAX_OBJECTS: '0', PDF_MEMORY_CACHE_MB: '0' };
  api = await startTestApi(env, { profile: 'embedded' });
  workerDir = await mkdtemp(path.join(os.tmpdir(), 'outage-worker-'));
  worker = await WorkerProcess.start({ ...env, DATA_DIR: workerDir });
  // The worker's first render launches its browser, which a loaded machine may not finish within one job's deadline.
  await vi.waitFor(
    async () => {
      const response = await api.call('/invoices/9001/pdf?lang=de');
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`first PDF answered ${response.status}`);
    },
    { timeout: 60_000, interval: 200 },
  );
}, 120_000);

afterAll(async () => {
  await worker?.kill();
  await api?.stop();
  await restartedRedis?.kill();
  await stack?.stop();
  if (workerDir) await rm(workerDir, { recursive: true, force: true });
});

describe('the probes when a dependency goes away (production profile)', () => {
  it('when Redis is stopped, then /health/ready stays 200 with the queue and Redis degraded while lists and lookups are served and PDFs answer 503; when Redis is back, the degraded entries clear and PDFs are served again', async () => {
    expect(await probe('ready')).toMatchObject({ status: 200, data: { status: 'ready', degraded: [] } });

    const redisPort = stack.redis.port;
    await stack.redis.kill();
    const down = await readyUntil((p) => p.data.status === 'degraded', SHOWS_WITHIN_MS);
    console.info(`Redis stopped: readiness reported it degraded after ${down.ms} ms, answers ${JSON.stringify(down.seen.map((p) => p.status))}`);
    // Never unready on the way: a load balancer keeps this instance.
    expect(down.seen.map((p) => p.status).filter((s) => s !== 200)).toEqual([]);
    expect(down.last.data).toEqual({
      status: 'degraded',
      checks: { database: 'ok', storage: 'ok', job_queue: expect.stringMatching(/^(failed|timeout)$/), redis: expect.stringMatching(/^(failed|timeout)$/) },
      degraded: ['job_queue', 'redis'],
    });
    expect((await probe('live')).status).toBe(200);

    // The main traffic is served: a list, a lookup.
    const list = await api.call('/invoices?per_page=5');
    expect(list.status).toBe(200);
    expect((await envelopeOf(list)).data.invoices.length).toBeGreaterThan(0);
    const lookup = await api.call('/orders/by-nr?nr=0412');
    expect(lookup.status).toBe(200);
    // What needs Redis says so, at once.
    const pdf = await api.call('/invoices/9001/pdf?lang=en');
    expect(pdf.status).toBe(503);
    expect(Number(pdf.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await pdf.arrayBuffer();

    restartedRedis = await PrivateRedis.start(redisPort);
    const back = await readyUntil((p) => p.data.status === 'ready', CLEARS_WITHIN_MS);
    console.info(`Redis back: degraded entries cleared after ${back.ms} ms`);
    expect(back.last.data).toEqual({ status: 'ready', checks: { database: 'ok', storage: 'ok', job_queue: 'ok', redis: 'ok' }, degraded: [] });
    // The worker reconnects by itself: PDFs are served again.
    await vi.waitFor(
      async () => {
        const response = await api.call('/invoices/9001/pdf?lang=pl');
        const bytes = Buffer.from(await response.arrayBuffer());
        if (response.status !== 200) throw new Error(`PDF answered ${response.status}`);
        expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
      },
      { timeout: 30_000, interval: 200 },
    );
  }, 90_000);

  it('when the database is unreachable, then /health/ready is 503 not ready naming the database, with Retry-After, while /health/live stays 200', async () => {
    await stack.mariadb.kill();
    const down = await readyUntil((p) => p.status === 503, SHOWS_WITHIN_MS);
    console.info(`database stopped: readiness 503 after ${down.ms} ms`);
    expect(down.last.message).toBe('Service Unavailable: database');
    expect(down.last.retryAfter).toBe('5');
    expect(down.last.data).toMatchObject({ status: 'not ready', failing: ['database'], degraded: [] });
    expect(['failed', 'timeout']).toContain(down.last.data.checks.database);
    const live = await probe('live');
    expect(live.status).toBe(200);
    expect(live.data.status).toBe('live');
  }, 60_000);
});
