/**
 * Issue 35, over HTTP: the worst cases of the header and query parsers (parsers-linear-time.property.test.ts
 * checks their growth directly) sent once each to the API, in both profiles, as large as the server's
 * limits let them reach a parser (64 KiB of headers in all, 8 KiB of query). Each is answered with
 * what a malformed value gets, at once: the old Range parser held the event loop 3 s for the first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eInvoiceQuerySchema, LIST_INVOICES_PARAMS, listEventsQuerySchema } from '@logi/domain';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';

let api: TestApi;
let fileId: number;
beforeAll(async () => {
  api = await startTestApi({}, { label: 'hostile-headers' });
  const { body, contentType } = multipart([{ name: 'files', filename: 'cmr.pdf', content: PDF_BYTES }]);
  const uploaded = await api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } });
  fileId = ((await envelopeOf(uploaded)).data.uploaded as Array<{ id: number }>)[0]!.id;
});
afterAll(async () => {
  await api?.stop();
});

/** What the server's head allows (64 KiB of headers in all): the worst run that reaches the parsers. */
const RUN = ' '.repeat(60_000);
/** Over HTTP the query is bounded at 8 KiB (414 past it). */
const QUERY_RUN = 8000;
/** Far above the few milliseconds these requests take, far below the seconds the old Range parser took. */
const HTTP_BOUND_MS = 1500;

async function timedCall(send: () => Promise<Response>): Promise<{ response: Response; ms: number }> {
  const started = performance.now();
  const response = await send();
  await response.arrayBuffer().catch(() => undefined);
  return { response, ms: performance.now() - started };
}

/** The fastest of two tries, as in the direct check: a busy moment of the machine is not the parser's. */
async function fastest(send: () => Promise<Response>): Promise<{ status: number; ms: number }> {
  const first = await timedCall(send);
  const second = await timedCall(send);
  return { status: second.response.status, ms: Math.min(first.ms, second.ms) };
}

describe('the worst cases over HTTP', () => {
  it('when a download asks Range: bytes=0- and 60,000 spaces and x (with and without a key), then 200 with the whole file, answered at once', async () => {
    const range = `bytes=0-${RUN}x`;
    const keyed = await fastest(() => api.call(`/orders/3001/files/${fileId}`, { headers: { Range: range } }));
    expect(keyed.status).toBe(200);
    expect(keyed.ms).toBeLessThan(HTTP_BOUND_MS);
    const link = await envelopeOf(await api.call(`/orders/3001/files/${fileId}/link`, { method: 'POST' }));
    const url = link.data.url as string;
    // The production profile's link is a presigned S3 URL: the S3 server answers it, not the API's parser.
    expect(url.startsWith(api.root)).toBe(PROFILE === 'embedded');
    if (PROFILE === 'embedded') {
      const keyless = await fastest(() => fetch(url, { headers: { Range: range } }));
      expect(keyless.status).toBe(200);
      expect(keyless.ms).toBeLessThan(HTTP_BOUND_MS);
    }
    // If-Range names another version: the whole file. An If-None-Match that names nothing of ours: the range.
    for (const [headers, status] of [
      [{ Range: 'bytes=0-1', 'If-Range': `"${RUN}x` }, 200],
      [{ Range: 'bytes=0-1', 'If-None-Match': `W/${'"",'.repeat(20_000)}` }, 206],
      [{ Range: 'bytes=0-1', 'If-None-Match': `"${'\\'.repeat(60_000)}` }, 206],
    ] as Array<[Record<string, string>, number]>) {
      const conditional = await fastest(() => api.call(`/orders/3001/files/${fileId}`, { headers }));
      expect(conditional.status).toBe(status);
      expect(conditional.ms).toBeLessThan(HTTP_BOUND_MS);
    }
  });

  it('when the credentials and the request id are 60,000 spaces and x, then 401 (or a fresh id), answered at once', async () => {
    for (const headers of [
      { Authorization: `Bearer ${RUN}x`, 'X-Client-Directory': 'baltic-haulage' },
      { Authorization: `Bearer${RUN}x${RUN.slice(0, 1000)}`, 'X-Client-Directory': 'baltic-haulage' },
      { Authorization: 'Bearer key', 'X-Client-Directory': `${RUN}x` },
    ]) {
      const answer = await fastest(() => api.call('/invoices', { as: null, headers }));
      expect(answer.status).toBe(401);
      expect(answer.ms).toBeLessThan(HTTP_BOUND_MS);
    }
    const stamped = await timedCall(() => api.call('/invoices?per_page=1', { headers: { 'X-Request-Id': `a${RUN}b` } }));
    expect(stamped.response.status).toBe(200);
    expect(stamped.response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(stamped.ms).toBeLessThan(HTTP_BOUND_MS);
  });

  it('when an upload sends a hostile Idempotency-Key or multipart Content-Type, then an envelope (422 or 400), answered at once', async () => {
    const { body, contentType } = multipart([{ name: 'files', filename: 'cmr.pdf', content: PDF_BYTES }]);
    const key = await fastest(() =>
      api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType, 'Idempotency-Key': `a${RUN}b` } }),
    );
    expect(key.status).toBe(422);
    expect(key.ms).toBeLessThan(HTTP_BOUND_MS);
    const boundary = await fastest(() =>
      api.call('/orders/3001/files', {
        method: 'POST',
        body: '--x--\r\n',
        headers: { 'Content-Type': `multipart/form-data; a="${'\\"'.repeat(15_000)}; boundary=${RUN.slice(0, 25_000)}x` },
      }),
    );
    expect([400, 422]).toContain(boundary.status);
    expect(boundary.ms).toBeLessThan(HTTP_BOUND_MS);
  });

  it('when each query parameter is 8 KB of hostile runs, then 422 or 404 or 200, answered at once', async () => {
    const runs = [' '.repeat(QUERY_RUN), ','.repeat(QUERY_RUN), '1,'.repeat(QUERY_RUN / 2), '-'.repeat(QUERY_RUN), '='.repeat(QUERY_RUN)];
    for (const [pathname, params] of [
      ['/invoices', LIST_INVOICES_PARAMS],
      ['/events', Object.keys(listEventsQuerySchema.shape)],
      ['/orders/by-nr', ['nr']],
      ['/invoices/9008/e-invoice', Object.keys(eInvoiceQuerySchema.shape)],
    ] as const) {
      for (const param of params) {
        for (const run of runs) {
          const answer = await timedCall(() => api.call(`${pathname}?${param}=${encodeURIComponent(run).slice(0, QUERY_RUN)}x`));
          expect([200, 404, 422], `${pathname}?${param}=${JSON.stringify(run.slice(0, 4))}…`).toContain(answer.response.status);
          expect(answer.ms).toBeLessThan(HTTP_BOUND_MS);
        }
      }
    }
  }, 120_000);
});
