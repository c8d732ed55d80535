import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_SECONDS: '30' });
});
afterAll(async () => {
  await api?.stop();
});

describe('rate limiting (memory)', () => {
  it('when a client makes requests, then Remaining counts down to 0 and the next is 429 with Retry-After', async () => {
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 5; i++) {
      const response = await api.call('/orders/file-categories');
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('5');
      remaining.push(response.headers.get('x-ratelimit-remaining'));
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const limited = await api.call('/orders/file-categories');
    expect(limited.status).toBe(429);
    expect(await envelopeOf(limited)).toEqual({ status: 429, message: 'Too Many Attempts.', data: null });
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
  });

  it('when one client is limited, then another client still has its own budget', async () => {
    const response = await api.call('/orders/file-categories', { as: 'alpine' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-remaining')).toBe('4');
  });

  it('when the limit is reached, then 429 comes before 404 and 422, but after an unknown path or method', async () => {
    expect((await api.call('/invoices/424242/pdf?lang=zz')).status).toBe(429);
    expect((await api.call('/invoices', { method: 'DELETE' })).status).toBe(405);
    expect((await api.call('/no/such/path')).status).toBe(404);
  });

  it('when credentials are wrong, then requests count per IP and are throttled too', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await api.call('/orders/file-categories', {
        as: null,
        headers: { Authorization: `Bearer guess-${i}`, 'X-Client-Directory': 'baltic-haulage' },
      });
      statuses.push(response.status);
      if (response.status === 401) expect(response.headers.get('x-ratelimit-remaining')).toBe(String(4 - i));
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('when the path is unknown, the method is wrong, or OPTIONS, then nothing is counted', async () => {
    for (let i = 0; i < 3; i++) {
      const unknown = await api.call('/unknown', { as: 'alpine' });
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get('x-ratelimit-remaining')).toBeNull();
      expect((await api.call('/invoices', { method: 'PUT', as: 'alpine' })).status).toBe(405);
      expect((await api.call('/invoices', { method: 'OPTIONS', as: 'alpine' })).status).toBe(204);
    }
    const counted = await api.call('/orders/file-categories', { as: 'alpine' });
    expect(counted.headers.get('x-ratelimit-remaining')).toBe('3');
  });
});

describe('rate limiting: Retry-After', () => {
  let short: TestApi;
  beforeAll(async () => {
    short = await startTestApi({ RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_SECONDS: '2' }, { label: 'retry-after' });
  });
  afterAll(async () => {
    await short?.stop();
  });

  it('when a limited client waits Retry-After seconds, then its next request goes through', async () => {
    expect((await short.call('/orders/file-categories')).status).toBe(200);
    expect((await short.call('/orders/file-categories')).status).toBe(200);
    const limited = await short.call('/orders/file-categories');
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    // Waiting is the behaviour under test: the header promises that this long is enough.
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    const after = await short.call('/orders/file-categories');
    expect(after.status).toBe(200);
  });
});

describe('rate limiting behind a proxy', () => {
  let proxied: TestApi;
  beforeAll(async () => {
    proxied = await startTestApi({ RATE_LIMIT_MAX: '1', TRUST_PROXY: 'true' }, { label: 'proxy' });
  });
  afterAll(async () => {
    await proxied?.stop();
  });

  it('when TRUST_PROXY is on, then unauthenticated requests count per forwarded client address', async () => {
    const from = (ip: string) => proxied.call('/invoices', { as: null, headers: { 'X-Forwarded-For': ip } });
    expect((await from('203.0.113.7')).status).toBe(401);
    expect((await from('203.0.113.7')).status).toBe(429);
    expect((await from('198.51.100.9')).status).toBe(401);
  });

  it('when a client writes its own X-Forwarded-For entries before the one the proxy appended, then it is still counted by its real address', async () => {
    const spoofed = (claimed: string) => proxied.call('/invoices', { as: null, headers: { 'X-Forwarded-For': `${claimed}, 192.0.2.44` } });
    expect((await spoofed('10.1.1.1')).status).toBe(401);
    expect((await spoofed('10.2.2.2')).status).toBe(429);
    expect((await spoofed('10.3.3.3')).status).toBe(429);
  });
});

describe('rate limiting behind two proxies', () => {
  let proxied: TestApi;
  beforeAll(async () => {
    proxied = await startTestApi({ RATE_LIMIT_MAX: '1', TRUST_PROXY: '2' }, { label: 'proxy-hops' });
  });
  afterAll(async () => {
    await proxied?.stop();
  });

  it('when TRUST_PROXY is 2, then the client is the entry two hops from the right, whatever the client wrote left of it', async () => {
    // The outer proxy appends the client (192.0.2.55), the inner one the outer proxy (10.0.0.2).
    const via = (forwarded: string) => proxied.call('/invoices', { as: null, headers: { 'X-Forwarded-For': forwarded } });
    expect((await via('6.6.6.6, 192.0.2.55, 10.0.0.2')).status).toBe(401);
    expect((await via('7.7.7.7, 8.8.8.8, 192.0.2.55, 10.0.0.2')).status).toBe(429);
    expect((await via('192.0.2.56, 10.0.0.2')).status).toBe(401);
  });
});

/** The parameters of a one-item structured field such as `"default";r=4;t=30` (RFC 8941), by name. */
function fieldParameters(value: string | null): { item: string; params: Record<string, number> } {
  expect(value).not.toBeNull();
  const [item, ...params] = value!.split(';');
  return { item: item!, params: Object.fromEntries(params.map((p) => p.split('=') as [string, string]).map(([k, v]) => [k, Number(v)])) };
}

describe('rate limiting: the IETF RateLimit fields', () => {
  let own: TestApi;
  beforeAll(async () => {
    own = await startTestApi({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_SECONDS: '20' });
  });
  afterAll(async () => {
    await own?.stop();
  });

  it('when a client makes requests, then RateLimit-Policy states the quota and RateLimit says what X-RateLimit-Remaining says, 0 on the 429', async () => {
    const seen: Array<{ remaining: number; r: number; t: number }> = [];
    for (let i = 0; i < 3; i++) {
      const response = await own.call('/orders/file-categories');
      expect(response.status).toBe(200);
      expect(fieldParameters(response.headers.get('ratelimit-policy'))).toEqual({ item: '"default"', params: { q: 3, w: 20 } });
      const { item, params } = fieldParameters(response.headers.get('ratelimit'));
      expect(item).toBe('"default"');
      seen.push({ remaining: Number(response.headers.get('x-ratelimit-remaining')), r: params.r!, t: params.t! });
    }
    expect(seen.map((s) => s.remaining)).toEqual([2, 1, 0]);
    expect(seen.map((s) => s.r)).toEqual([2, 1, 0]);
    for (const { t } of seen) {
      expect(Number.isInteger(t)).toBe(true);
      expect(t).toBeGreaterThanOrEqual(0);
      expect(t).toBeLessThanOrEqual(20);
    }
    const limited = await own.call('/orders/file-categories');
    expect(limited.status).toBe(429);
    const { params } = fieldParameters(limited.headers.get('ratelimit'));
    expect(params.r).toBe(0);
    expect(params.t).toBe(Number(limited.headers.get('retry-after')));
    expect(fieldParameters(limited.headers.get('ratelimit-policy')).params).toEqual({ q: 3, w: 20 });
  });
});
