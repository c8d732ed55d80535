import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Tokens } from '@logi/api';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { DIRS } from '../support/test-fixture.js';
import { pdfCacheKey } from '@logi/domain';

const run = promisify(execFile);
const STRONG_ETAG = /^"[0-9a-f]{64}"$/;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { label: 'pdfcache' });
});
afterAll(async () => {
  await api?.stop();
});

interface MetricsJson {
  name: string;
  values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
}

/** A sample of the API's own registry (the same numbers /metrics shows), 0 when not counted yet. */
async function sample(metricName: string, labels: Record<string, string>): Promise<number> {
  const metrics = api.container.get<{ registry: { getMetricsAsJSON(): Promise<MetricsJson[]> } }>(Tokens.Metrics);
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    for (const value of metric.values) {
      const name = value.metricName ?? metric.name;
      if (name === metricName && Object.entries(labels).every(([k, v]) => String(value.labels[k]) === v)) return value.value;
    }
  }
  return 0;
}

/** Render jobs the API waited for: each one is a render by the worker (production) or in-process (embedded). */
const renderJobs = () => sample('logistics_job_duration_seconds_count', { job: 'render-invoice-pdf' });
const cacheCount = (outcome: string) => sample('logistics_pdf_cache_requests_total', { outcome });

async function pdfText(bytes: Buffer): Promise<string> {
  const file = path.join(api.dataDir, `check-${process.hrtime.bigint()}.pdf`);
  await writeFile(file, bytes);
  return (await run('pdftotext', ['-layout', file, '-'])).stdout;
}

async function download(target: string, headers: Record<string, string> = {}) {
  const response = await api.call(target, { headers });
  return { response, body: Buffer.from(await response.arrayBuffer()), etag: response.headers.get('etag') };
}

describe('GET /invoices/{id}/pdf: cache and conditional requests', () => {
  it('when a PDF is downloaded twice, then both carry the same strong ETag and private, no-cache, and the second is served from the cache without a render', async () => {
    const jobsBefore = await renderJobs();
    const hitsBefore = await cacheCount('hit');
    const first = await download('/invoices/9003/pdf?lang=de');
    expect(first.response.status).toBe(200);
    expect(first.etag).toMatch(STRONG_ETAG);
    expect(first.response.headers.get('cache-control')).toBe('private, no-cache');
    expect(first.body.subarray(0, 5).toString()).toBe('%PDF-');
    expect(await renderJobs()).toBe(jobsBefore + 1);
    // The job keeps the PDF in the cache after it handed it to the API (ADR 0057): there once the write ends.
    await vi.waitFor(async () => expect(await api.objectKeys()).toContain(pdfCacheKey(first.etag!.slice(1, -1), DIRS.baltic)), {
      timeout: 5_000,
      interval: 20,
    });

    const second = await download('/invoices/9003/pdf?lang=de');
    expect(second.response.status).toBe(200);
    expect(second.etag).toBe(first.etag);
    expect(second.response.headers.get('cache-control')).toBe('private, no-cache');
    expect(second.response.headers.get('content-disposition')).toBe('attachment; filename="FV_10_2026_0100.pdf"');
    expect(second.body.equals(first.body)).toBe(true);
    expect(await renderJobs()).toBe(jobsBefore + 1);
    expect(await cacheCount('hit')).toBe(hitsBefore + 1);
  });

  it('when If-None-Match names the current ETag (strong, weak or among others), then 304 with no body and no render', async () => {
    const { etag } = await download('/invoices/9004/pdf');
    const jobsBefore = await renderJobs();
    for (const ifNoneMatch of [etag!, `W/${etag}`, `"other", ${etag}`, '*']) {
      const response = await api.call('/invoices/9004/pdf', { headers: { 'If-None-Match': ifNoneMatch } });
      expect(response.status).toBe(304);
      expect(response.headers.get('etag')).toBe(etag);
      expect(response.headers.get('cache-control')).toBe('private, no-cache');
      expect(response.headers.get('content-disposition')).toBeNull();
      expect((await response.arrayBuffer()).byteLength).toBe(0);
    }
    expect(await renderJobs()).toBe(jobsBefore);
  });

  it('when If-None-Match names another version, or the language or duplicate flag differ, then 200 with the PDF and another ETag', async () => {
    const { etag } = await download('/invoices/9004/pdf');
    const other = await download('/invoices/9004/pdf', { 'If-None-Match': `"${'0'.repeat(64)}"` });
    expect(other.response.status).toBe(200);
    expect(other.etag).toBe(etag);
    const polish = await download('/invoices/9004/pdf?lang=pl', { 'If-None-Match': etag! });
    expect(polish.response.status).toBe(200);
    expect(polish.etag).toMatch(STRONG_ETAG);
    expect(polish.etag).not.toBe(etag);
    const duplicate = await download('/invoices/9004/pdf?duplicate=1', { 'If-None-Match': etag! });
    expect(duplicate.response.status).toBe(200);
    expect(new Set([etag, polish.etag, duplicate.etag]).size).toBe(3);
  });

  it("when If-None-Match is sent without credentials, for another client's invoice or with an invalid query, then 401, 404 and 422 come first", async () => {
    const { etag } = await download('/invoices/9004/pdf');
    const anonymous = await api.call('/invoices/9004/pdf', { as: null, headers: { 'If-None-Match': etag! } });
    expect(anonymous.status).toBe(401);
    const foreign = await api.call('/invoices/9101/pdf', { headers: { 'If-None-Match': '*' } });
    expect(foreign.status).toBe(404);
    expect((await envelopeOf(foreign)).message).toBe('Invoice not found');
    const invalid = await api.call('/invoices/9004/pdf?lang=xx', { headers: { 'If-None-Match': '*' } });
    expect(invalid.status).toBe(422);
  });

  it('when the invoice data changes, then the old ETag no longer matches and a new PDF with the new data comes under a new ETag', async () => {
    const before = await download('/invoices/9007/pdf');
    expect(await pdfText(before.body)).toContain('Zeta Spedition');
    await api.knex('invoices').where({ id: 9007 }).update({ customer_name: 'Omega Logistics' });
    const jobsBefore = await renderJobs();
    const after = await download('/invoices/9007/pdf', { 'If-None-Match': before.etag! });
    expect(after.response.status).toBe(200);
    expect(after.etag).toMatch(STRONG_ETAG);
    expect(after.etag).not.toBe(before.etag);
    expect(await renderJobs()).toBe(jobsBefore + 1);
    const text = await pdfText(after.body);
    expect(text).toContain('Omega Logistics');
    expect(text).not.toContain('Zeta Spedition');
    const keys = await api.objectKeys();
    expect(keys).toContain(pdfCacheKey(after.etag!.slice(1, -1), DIRS.baltic));
    expect(keys.filter((key) => !key.startsWith('pdf-cache/'))).toEqual([]);
  });
  it("when the seller's company data or an item changes, then the next download prints it under a new ETag (what the process remembers is tied to the data version)", async () => {
    const before = await download('/invoices/9007/pdf?lang=pl');
    const again = await download('/invoices/9007/pdf?lang=pl');
    expect(again.etag).toBe(before.etag);
    await api.knex('clients').where({ directory: DIRS.baltic }).update({ company_name: 'Renamed Seller S.A.' });
    const seller = await download('/invoices/9007/pdf?lang=pl');
    expect(seller.etag).toMatch(STRONG_ETAG);
    expect(seller.etag).not.toBe(before.etag);
    expect(await pdfText(seller.body)).toContain('Renamed Seller S.A.');
    await api.knex('invoice_items').where({ invoice_id: 9007 }).update({ name: 'Renamed freight item' });
    const item = await download('/invoices/9007/pdf?lang=pl');
    expect(item.etag).not.toBe(seller.etag);
    expect(await pdfText(item.body)).toContain('Renamed freight item');
  });
});
