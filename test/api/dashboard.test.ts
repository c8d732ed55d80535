import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '@logi/config';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
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

describe('the queue dashboard, with DASHBOARD_USER, DASHBOARD_PASSWORD and REDIS_URL', () => {
  const prefix = `test-dash-${randomBytes(4).toString('hex')}`;
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(
      { REDIS_URL, REDIS_PREFIX: prefix, DASHBOARD_USER: USER, DASHBOARD_PASSWORD: PASSWORD, RATE_LIMIT_MAX: '3' },
      { profile: 'embedded' },
    );
  });
  afterAll(async () => {
    await api?.stop();
    await deleteRedisKeys(REDIS_URL, `${prefix}:*`);
  });

  it.each([
    ['no Authorization header', {}],
    ['a wrong password', basic(USER, 'pä55:wörd!')],
    ['a wrong user', basic('root', PASSWORD)],
    ['an empty password', basic(USER, '')],
    ['a client bearer key instead', { Authorization: 'Bearer test-key-baltic-0123456789' }],
    ['a header that is not base64', { Authorization: 'Basic not*base64' }],
  ])('when the request has %s, then 401 with a Basic challenge and no dashboard', async (_case, headers) => {
    for (const suffix of ['', '/', '/api/queues']) {
      const response = await fetch(`${api.root}/admin/queues${suffix}`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm="[^"]+"/);
      const body = await envelopeOf(response);
      expect(body.status).toBe(401);
      expect(body.data).toBeNull();
    }
  });

  it('when the credentials are right, then the dashboard page is served as HTML, with its assets', async () => {
    const response = await fetch(`${api.root}/admin/queues`, { headers: basic(USER, PASSWORD) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain('Logistics queues');
    // Its assets are relative to this base, so they are served (and guarded) under /admin/queues too.
    expect(html).toContain('<base href="/admin/queues/" />');
    const asset = /src="(static\/js\/main\.[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(`${api.root}/admin/queues/${asset}`, { headers: basic(USER, PASSWORD) });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await script.text()).length).toBeGreaterThan(1000);
    expect((await fetch(`${api.root}/admin/queues/${asset}`)).status).toBe(401);
  });

  it('when its API is asked for the queues, then it lists pdf and uploads with their counts', async () => {
    const response = await fetch(`${api.root}/admin/queues/api/queues`, { headers: basic(USER, PASSWORD) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { queues: Array<{ name: string; counts: Record<string, number> }> };
    expect(body.queues.map((q) => q.name).sort()).toEqual(['pdf', 'uploads']);
    for (const queue of body.queues) expect(queue.counts.waiting).toBe(0);
  });

  it('when an operator uses it a lot, then it is never rate limited as a client route', async () => {
    for (let i = 0; i < 6; i += 1) {
      const response = await fetch(`${api.root}/admin/queues/api/queues`, { headers: basic(USER, PASSWORD) });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('when another path or method is asked, then the usual 404 and 405 envelopes still answer', async () => {
    const unknown = await fetch(`${api.root}/admin/other`, { headers: basic(USER, PASSWORD) });
    expect(unknown.status).toBe(404);
    expect((await envelopeOf(unknown)).message).toBe('Not Found');
    const unknownUnder = await fetch(`${api.root}/admin/queues/api/no-such-thing`, { headers: basic(USER, PASSWORD) });
    expect(unknownUnder.status).toBe(404);
    expect((await envelopeOf(unknownUnder)).message).toBe('Not Found');
    const wrongMethod = await fetch(`${api.root}/admin/queues`, { method: 'DELETE', headers: basic(USER, PASSWORD) });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('GET');
    expect((await envelopeOf(wrongMethod)).status).toBe(405);
    const clientRoute = await api.call('/invoices', { method: 'DELETE' });
    expect(clientRoute.status).toBe(405);
    expect((await api.call('/orders/file-categories')).status).toBe(200);
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
