import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';
import { rawRequest } from '../support/raw-http.js';

/** `X-Content-Type-Options: nosniff` on every answer; `Cache-Control: no-store` on the answers that carry a webhook secret. */
let api: TestApi;
/** No worker process: it would take the same METRICS_PORT. */
let metricsPort: number;

beforeAll(async () => {
  metricsPort = await freePort();
  api = await startTestApi(
    { METRICS_PORT: String(metricsPort), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', RATE_LIMIT_MAX: '100000' },
    { label: 'headers', worker: false },
  );
});

afterAll(async () => {
  await api?.stop();
});

function json(method: string, path: string, body: unknown) {
  return api.call(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
}

describe('security headers', () => {
  it('when any kind of answer is given (data, errors, docs, health, metrics, a head Node refuses), then it says nosniff', async () => {
    const answers: Array<[string, Response]> = [
      ['list', await api.call('/invoices')],
      ['401', await api.call('/invoices', { as: null })],
      ['404 path', await api.call('/no-such-path')],
      ['404 id', await api.call('/invoices/123456/pdf')],
      ['405', await api.call('/invoices', { method: 'DELETE' })],
      ['422', await api.call('/invoices?per_page=0')],
      ['OPTIONS', await api.call('/invoices', { method: 'OPTIONS', as: null })],
      ['openapi', await fetch(`${api.base}/openapi.json`)],
      ['docs', await fetch(`${api.base}/docs`)],
      ['live', await fetch(`${api.root}/health/live`)],
      ['ready', await fetch(`${api.root}/health/ready`)],
      ['root 404', await fetch(`${api.root}/`)],
      ['metrics', await fetch(`http://127.0.0.1:${metricsPort}/metrics`)],
      ['metrics 404', await fetch(`http://127.0.0.1:${metricsPort}/elsewhere`)],
      ['414', await rawRequest(api.root, `GET /v1/invoices?q=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)],
    ];
    const statuses = Object.fromEntries(answers.map(([name, response]) => [name, response.status]));
    expect(statuses).toMatchObject({ list: 200, '401': 401, '405': 405, '422': 422, OPTIONS: 204, metrics: 200, '414': 414 });
    const without = answers.filter(([, response]) => response.headers.get('x-content-type-options') !== 'nosniff').map(([name]) => name);
    expect(without).toEqual([]);
    for (const [, response] of answers) await response.body?.cancel();
  });

  it('when a webhook endpoint is created or its secret rotated, then the answer is no-store; reading endpoints is not', async () => {
    const created = await json('POST', '/webhook-endpoints', { url: 'https://127.0.0.1:9/hook' });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { id } = (await envelopeOf(created)).data as { id: number };
    try {
      const rotated = await json('POST', `/webhook-endpoints/${id}/rotate-secret`, {});
      expect(rotated.status).toBe(200);
      expect(rotated.headers.get('cache-control')).toBe('no-store');
      expect((await envelopeOf(rotated)).data.secret).toMatch(/^whsec_/);
      const listed = await api.call('/webhook-endpoints');
      expect(listed.status).toBe(200);
      expect(listed.headers.get('cache-control')).toBeNull();
      await listed.body?.cancel();
    } finally {
      await api.call(`/webhook-endpoints/${id}`, { method: 'DELETE' });
    }
  });
});
