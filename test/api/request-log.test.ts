import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
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

  it("when a file link is made and fetched, then its token (the file's credential) is in no log line; the line names the route's pattern", async () => {
    const { body, contentType } = multipart([{ name: 'files', filename: 'logged.pdf', content: Buffer.concat([PDF_BYTES, Buffer.from(`log ${Date.now()}`)]) }]);
    const uploaded = await envelopeOf(await api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } }));
    const fileId = (uploaded.data as { uploaded: Array<{ id: number }> }).uploaded[0]!.id;
    const made = await envelopeOf(await api.call(`/orders/3001/files/${fileId}/link`, { method: 'POST' }));
    const url = new URL(made.data.url as string);
    // A link on the API (embedded) is its path's last segment; a presigned one (S3) its signature. Both are fetched.
    const secret = url.pathname.startsWith('/v1/file-links/') ? url.pathname.split('/').at(-1)! : url.searchParams.get('X-Amz-Signature')!;
    expect(secret.length).toBeGreaterThan(20);
    expect((await fetch(url)).status).toBe(200);
    const forged = `${'A'.repeat(40)}.${'B'.repeat(43)}`;
    const refused = await fetch(`${api.root}/v1/file-links/${forged}`, { headers: { 'X-Request-Id': 'trace-link-1' } });
    expect(refused.status).toBe(403);
    await expect.poll(() => requestLines('trace-link-1').length).toBe(1);
    expect(requestLines('trace-link-1')[0]).toMatchObject({ route: '/v1/file-links/:token', status: 403 });
    for (const line of lines) {
      expect(JSON.stringify(line)).not.toContain(secret);
      expect(JSON.stringify(line)).not.toContain(forged.slice(0, 40));
    }
  });
});
