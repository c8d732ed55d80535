import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { KEYS } from '../support/test-fixture.js';

let api: TestApi;
const lines: Array<Record<string, unknown>> = [];
beforeAll(async () => {
  api = await startTestApi({}, { logLines: lines });
});
afterAll(async () => {
  await api?.stop();
});

const requestLines = (requestId: string) => lines.filter((line) => line.msg === 'request' && line.requestId === requestId);

describe('request logs', () => {
  it('when a client calls, then one JSON line has method, route pattern, status, duration, directory and request id, and no key', async () => {
    const response = await api.call('/invoices/9001/pdf?lang=de', { headers: { 'X-Request-Id': 'trace-abc-1' } });
    expect(response.status).toBe(200);
    await expect.poll(() => requestLines('trace-abc-1').length).toBe(1);
    const [line] = requestLines('trace-abc-1');
    expect(line).toMatchObject({ method: 'GET', route: '/v1/invoices/:invoiceId/pdf', status: 200, directory: 'baltic-haulage', requestId: 'trace-abc-1' });
    expect(typeof line!.durationMs).toBe('number');
    expect(JSON.stringify(lines)).not.toContain(KEYS.baltic);
  });

  it('when credentials fail, then the line has no directory and still no key', async () => {
    await api.call('/invoices', { as: null, headers: { Authorization: 'Bearer some-guess-key', 'X-Request-Id': 'trace-abc-2' } });
    await expect.poll(() => requestLines('trace-abc-2').length).toBe(1);
    expect(requestLines('trace-abc-2')[0]).toMatchObject({ status: 401, directory: null });
    expect(JSON.stringify(lines)).not.toContain('some-guess-key');
  });
});
