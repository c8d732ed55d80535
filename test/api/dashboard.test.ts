import http from 'node:http';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '@logi/config';
import type { Queue } from 'bullmq';
import { Tokens } from '@logi/api';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';
import { deleteRedisKeys } from '../support/production-stack.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const USER = 'ops';
// Non-ASCII and a colon: the password is everything after the first colon, read as UTF-8.
const PASSWORD = 'pä55:wörd';

function basic(user: string, password: string): Record<string, string> {
  return { Authorization: `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}` };
}

describe('the queue dashboard, when it is not configured', () => {
  const prefix = `test-dash-off-${randomBytes(4).toString('hex')}`;
  let withRedis: TestApi;
  let withoutRedis: TestApi;
  beforeAll(async () => {
    withRedis = await startTestApi({ REDIS_URL, REDIS_PREFIX: prefix }, { profile: 'embedded' });
    withoutRedis = await startTestApi({ DASHBOARD_USER: USER, DASHBOARD_PASSWORD: PASSWORD }, { profile: 'embedded' });
  });
  afterAll(async () => {
    await withRedis?.stop();
    await withoutRedis?.stop();
    await deleteRedisKeys(REDIS_URL, `${prefix}:*`);
  });

  it('when no credentials are configured, then /admin/queues is an unknown path (404 envelope), even with Redis', async () => {
    for (const url of [`${withRedis.root}/admin/queues`, `${withRedis.root}/admin/queues/api/queues`]) {
      const response = await fetch(url, { headers: basic(USER, PASSWORD) });
      expect(response.status).toBe(404);
      expect(await envelopeOf(response)).toEqual({ status: 404, message: 'Not Found', data: null });
    }
  });

  it('when credentials are set but REDIS_URL is not, then it stays off: there are no queues to show', async () => {
    const response = await fetch(`${withoutRedis.root}/admin/queues`, { headers: basic(USER, PASSWORD) });
    expect(response.status).toBe(404);
    expect(response.headers.get('www-authenticate')).toBeNull();
  });
});

interface DashboardApi {
  api: TestApi;
  /** The dashboard's own listener, e.g. http://127.0.0.1:40123 */
  root: string;
  queues: Queue[];
}

/**
 * An API with the dashboard on a free port of its own, behind one trusted proxy hop, so each test can
 * come from an address of its own (X-Forwarded-For) and count its failed logins apart from the others.
 */
async function startDashboard(prefix: string, env: Record<string, string> = {}): Promise<DashboardApi> {
  const port = await freePort();
  const api = await startTestApi(
    {
      REDIS_URL,
      REDIS_PREFIX: prefix,
      DASHBOARD_USER: USER,
      DASHBOARD_PASSWORD: PASSWORD,
      DASHBOARD_PORT: String(port),
      TRUST_PROXY: '1',
      RATE_LIMIT_MAX: '3',
      ...env,
    },
    { profile: 'embedded' },
  );
  const inspector = api.container.get<{ queues: Queue[] }>(Tokens.QueueInspector);
  return { api, root: `http://127.0.0.1:${port}`, queues: inspector.queues };
}

let nextAddress = 1;
/** Headers of a request from an address no other request of this file uses. */
function from(headers: Record<string, string> = {}): Record<string, string> {
  nextAddress += 1;
  return { 'X-Forwarded-For': `198.51.100.${nextAddress}`, ...headers };
}

function queueNamed(dashboard: DashboardApi, name: string): Queue {
  const queue = dashboard.queues.find((q) => q.name === name);
  if (!queue) throw new Error(`no queue ${name}`);
  return queue;
}

describe('the queue dashboard, with DASHBOARD_USER, DASHBOARD_PASSWORD and REDIS_URL', () => {
  const prefix = `test-dash-${randomBytes(4).toString('hex')}`;
  let dashboard: DashboardApi;
  beforeAll(async () => {
    dashboard = await startDashboard(prefix);
  });
  afterAll(async () => {
    await dashboard?.api.stop();
    await deleteRedisKeys(REDIS_URL, `${prefix}:*`);
  });

  it('when a dashboard answer keeps its connection, then it is kept HTTP_KEEP_ALIVE_TIMEOUT_MS (65 s by default), as on the API, above a load balancer idle timeout', async () => {
    const head = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
      const agent = new http.Agent({ keepAlive: true });
      http
        .get(`${dashboard.root}/admin/queues`, { agent, headers: from() }, (response) => {
          response.resume();
          response.on('end', () => {
            agent.destroy();
            resolve(response.headers);
          });
        })
        .on('error', reject);
    });
    expect(head['keep-alive']).toBe('timeout=65');
  });

  it('when the public API port is asked for the dashboard, then it is an unknown path there: the dashboard has its own listener', async () => {
    for (const suffix of ['', '/', '/api/queues']) {
      const response = await fetch(`${dashboard.api.root}/admin/queues${suffix}`, { headers: basic(USER, PASSWORD) });
      expect(response.status).toBe(404);
      expect(await envelopeOf(response)).toEqual({ status: 404, message: 'Not Found', data: null });
      expect(response.headers.get('www-authenticate')).toBeNull();
    }
  });

  it.each([
    ['no Authorization header', {}],
    ['a wrong password', basic(USER, 'pä55:wörd!')],
    ['a wrong user', basic('root', PASSWORD)],
    ['an empty password', basic(USER, '')],
    ['a client bearer key instead', { Authorization: 'Bearer test-key-baltic-0123456789' }],
    ['a header that is not base64', { Authorization: 'Basic not*base64' }],
  ])('when the request has %s, then 401 with a Basic challenge and no dashboard', async (_case, headers) => {
    const address = from();
    for (const suffix of ['', '/', '/api/queues']) {
      const response = await fetch(`${dashboard.root}/admin/queues${suffix}`, { headers: { ...address, ...headers } });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm="[^"]+"/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const body = await envelopeOf(response);
      expect(body.status).toBe(401);
      expect(body.data).toBeNull();
    }
  });

  it('when the credentials are right, then the dashboard page is served as HTML, with its assets', async () => {
    const headers = from(basic(USER, PASSWORD));
    const response = await fetch(`${dashboard.root}/admin/queues`, { headers });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await response.text();
    expect(html).toContain('Logistics queues');
    // Its assets are relative to this base, so they are served (and guarded) under /admin/queues too.
    expect(html).toContain('<base href="/admin/queues/" />');
    const asset = /src="(static\/js\/main\.[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(`${dashboard.root}/admin/queues/${asset}`, { headers });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await script.text()).length).toBeGreaterThan(1000);
    expect((await fetch(`${dashboard.root}/admin/queues/${asset}`, { headers: from() })).status).toBe(401);
  });

  it('when its API is asked for the queues, then it lists pdf, pdf-bulk (exports’ renders) and uploads with their counts, read-only', async () => {
    const response = await fetch(`${dashboard.root}/admin/queues/api/queues`, { headers: from(basic(USER, PASSWORD)) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { queues: Array<{ name: string; counts: Record<string, number>; readOnlyMode: boolean }> };
    expect(body.queues.map((q) => q.name).sort()).toEqual(['pdf', 'pdf-bulk', 'uploads']);
    for (const queue of body.queues) expect(queue).toMatchObject({ counts: { waiting: 0 }, readOnlyMode: true });
  });

  it('when a write is asked without DASHBOARD_WRITE (add, retry, promote, clean, empty, obliterate, pause), then 405 and the queue is unchanged', async () => {
    const queue = queueNamed(dashboard, 'pdf');
    const job = await queue.add('dashboard-test', { n: 1 }, { delay: 60_000 });
    await queue.add('dashboard-test', { n: 2 });
    const before = await queue.getJobCounts('waiting', 'delayed', 'failed', 'completed');
    expect(before).toMatchObject({ waiting: 1, delayed: 1 });
    const headers = from({ ...basic(USER, PASSWORD), 'Content-Type': 'application/json' });
    const writes: Array<[string, string, unknown?]> = [
      ['POST', '/api/queues/pdf/add', { name: 'x', data: {} }],
      ['PUT', '/api/queues/pdf/retry/failed'],
      ['PUT', '/api/queues/pdf/promote'],
      ['PUT', '/api/queues/pdf/clean/delayed'],
      ['PUT', '/api/queues/pdf/empty'],
      ['PUT', '/api/queues/pdf/obliterate'],
      ['PUT', '/api/queues/pdf/pause'],
      ['PUT', '/api/queues/pause'],
      ['PUT', `/api/queues/pdf/${job.id}/promote`],
      ['PUT', `/api/queues/pdf/${job.id}/clean`],
      ['PATCH', `/api/queues/pdf/${job.id}/update-data`, { data: { n: 9 } }],
    ];
    for (const [method, path, body] of writes) {
      const response = await fetch(`${dashboard.root}/admin/queues${path}`, { method, headers, body: JSON.stringify(body ?? {}) });
      expect(`${method} ${path}: ${response.status}`).toBe(`${method} ${path}: 405`);
      expect(await envelopeOf(response)).toMatchObject({ status: 405, data: null });
      expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    }
    expect(await queue.getJobCounts('waiting', 'delayed', 'failed', 'completed')).toEqual(before);
    expect(await queue.isPaused()).toBe(false);
    expect((await queue.getJob(job.id!))?.data).toEqual({ n: 1 });
    await queue.obliterate({ force: true });
  });

  it('when an operator uses it a lot, then it is never rate limited as a client route', async () => {
    const headers = from(basic(USER, PASSWORD));
    for (let i = 0; i < 6; i += 1) {
      const response = await fetch(`${dashboard.root}/admin/queues/api/queues`, { headers });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('when a password is guessed again and again from one address, then after 5 failures it is 429 until the window ends, the right one too; other addresses are not held', async () => {
    const address = from();
    for (let i = 0; i < 5; i += 1) {
      const response = await fetch(`${dashboard.root}/admin/queues/api/queues`, { headers: { ...address, ...basic(USER, `guess-${i}`) } });
      expect(response.status).toBe(401);
      await response.body?.cancel();
    }
    for (const credentials of [basic(USER, 'guess-5'), basic(USER, PASSWORD)]) {
      const held = await fetch(`${dashboard.root}/admin/queues/api/queues`, { headers: { ...address, ...credentials } });
      expect(held.status).toBe(429);
      expect(await envelopeOf(held)).toEqual({ status: 429, message: 'Too Many Attempts.', data: null });
      const retryAfter = Number(held.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    const other = await fetch(`${dashboard.root}/admin/queues/api/queues`, { headers: from(basic(USER, PASSWORD)) });
    expect(other.status).toBe(200);
    await other.body?.cancel();
  });

  it('when another path or method is asked, then the usual 404 and 405 envelopes answer on its listener', async () => {
    const headers = from(basic(USER, PASSWORD));
    const unknown = await fetch(`${dashboard.root}/admin/other`, { headers });
    expect(unknown.status).toBe(404);
    expect((await envelopeOf(unknown)).message).toBe('Not Found');
    const unknownUnder = await fetch(`${dashboard.root}/admin/queues/api/no-such-thing`, { headers });
    expect(unknownUnder.status).toBe(404);
    expect((await envelopeOf(unknownUnder)).message).toBe('Not Found');
    const wrongMethod = await fetch(`${dashboard.root}/admin/queues`, { method: 'DELETE', headers });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('GET');
    expect((await envelopeOf(wrongMethod)).status).toBe(405);
    // The client API is not served there.
    expect((await fetch(`${dashboard.root}/v1/invoices`, { headers })).status).toBe(404);
    expect((await dashboard.api.call('/orders/file-categories')).status).toBe(200);
  });
});

describe('the queue dashboard, with DASHBOARD_WRITE=true', () => {
  const prefix = `test-dash-write-${randomBytes(4).toString('hex')}`;
  let dashboard: DashboardApi;
  beforeAll(async () => {
    dashboard = await startDashboard(prefix, { DASHBOARD_WRITE: 'true' });
  });
  afterAll(async () => {
    await dashboard?.api.stop();
    await deleteRedisKeys(REDIS_URL, `${prefix}:*`);
  });

  it('when an operator cleans, promotes and empties a queue, then bull-board does it', async () => {
    const queue = queueNamed(dashboard, 'uploads');
    const delayed = await queue.add('dashboard-test', { n: 1 }, { delay: 60_000 });
    await queue.add('dashboard-test', { n: 2 }, { delay: 60_000 });
    const headers = from({ ...basic(USER, PASSWORD), 'Content-Type': 'application/json' });
    const listed = (await (await fetch(`${dashboard.root}/admin/queues/api/queues`, { headers })).json()) as { queues: Array<{ readOnlyMode: boolean }> };
    expect(listed.queues.every((q) => !q.readOnlyMode)).toBe(true);

    const cleaned = await fetch(`${dashboard.root}/admin/queues/api/queues/uploads/${delayed.id}/clean`, { method: 'PUT', headers, body: '{}' });
    expect(cleaned.status).toBe(204);
    expect(await queue.getJob(delayed.id!)).toBeUndefined();
    const promoted = await fetch(`${dashboard.root}/admin/queues/api/queues/uploads/promote`, { method: 'PUT', headers, body: '{}' });
    expect(promoted.status).toBe(200);
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 1, delayed: 0 });
    const emptied = await fetch(`${dashboard.root}/admin/queues/api/queues/uploads/empty`, { method: 'PUT', headers, body: '{}' });
    expect(emptied.status).toBe(200);
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 0, delayed: 0 });
  });
});

describe('the queue dashboard, half configured', () => {
  it.each([
    [{ DASHBOARD_USER: USER }, 'DASHBOARD_PASSWORD'],
    [{ DASHBOARD_PASSWORD: PASSWORD }, 'DASHBOARD_USER'],
  ])('when only %j is set, then the API does not start: a ConfigError names %s', async (env, missing) => {
    const error = await startTestApi(env, { profile: 'embedded' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(new RegExp(`^Configuration error: ${missing} `));
  });

  it('when the API process is started with only DASHBOARD_USER, then it exits 1 with one line naming DASHBOARD_PASSWORD', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve(import.meta.dirname, '../../packages/api/src/main.ts')], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { ...process.env, PORT: '0', METRICS_PORT: '0', DASHBOARD_USER: USER, DASHBOARD_PASSWORD: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Configuration error: DASHBOARD_PASSWORD /)]);
  });

  it('when DASHBOARD_USER holds a colon, then it is refused: HTTP Basic user names cannot', async () => {
    await expect(startTestApi({ DASHBOARD_USER: 'a:b', DASHBOARD_PASSWORD: 'x' }, { profile: 'embedded' })).rejects.toThrow(
      /^Configuration error: DASHBOARD_USER /,
    );
  });
});
