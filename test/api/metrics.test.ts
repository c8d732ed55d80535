import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '@logi/config';
import { buildContainer, startServer } from '@logi/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import { freePort } from '../support/free-port.js';
import { parseSamples } from '../support/prometheus.js';

async function scrape(port: number): Promise<{ contentType: string | null; text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(response.status).toBe(200);
  return { contentType: response.headers.get('content-type'), text: await response.text() };
}

/** The value of one sample line, e.g. `http_request_duration_seconds_count{...}`; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

let api: TestApi;
let metricsPort: number;
beforeAll(async () => {
  metricsPort = await freePort();
  api = await startTestApi({ METRICS_PORT: String(metricsPort), RATE_LIMIT_MAX: '20' });
});
afterAll(async () => {
  await api?.stop();
});

describe('Prometheus metrics', () => {
  it('when requests were made, then the metrics listener serves the request histogram by method, route pattern and status', async () => {
    expect((await api.call('/invoices')).status).toBe(200);
    expect((await api.call('/invoices/9001/pdf')).status).toBe(200);
    expect((await api.call('/invoices/123456/pdf')).status).toBe(404);
    expect((await api.call('/invoices', { as: null })).status).toBe(401);
    expect((await api.call('/no/such/path')).status).toBe(404);
    const { contentType, text } = await scrape(metricsPort);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/v1/invoices', status: '200' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/v1/invoices', status: '401' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { route: '/v1/invoices/:invoiceId/pdf', status: '200' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { route: '/v1/invoices/:invoiceId/pdf', status: '404' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_bucket', { route: '/v1/invoices', status: '200', le: '+Inf' })).toBe(1);
    // Raw URLs never become labels: one series per route, not per id. Label values are read from the
    // parsed samples (durations and sums are numbers that may hold any digits).
    const labelValues = parseSamples(text).flatMap((s) => Object.values(s.labels));
    expect(labelValues).toContain('/v1/invoices/:invoiceId/pdf');
    expect(labelValues.filter((value) => value.includes('9001') || value.includes('123456'))).toEqual([]);
    expect(labelValues.filter((value) => value.includes('/no/such'))).toEqual([]);
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('when a PDF is rendered and a file uploaded, then job and render durations and stored bytes are counted', async () => {
    const before = (await scrape(metricsPort)).text;
    expect((await api.call('/invoices/9002/pdf?lang=pl')).status).toBe(200);
    const upload = multipart([{ name: 'files', filename: 'cmr.pdf', content: PDF_BYTES }]);
    expect((await api.call('/orders/3001/files', { method: 'POST', body: upload.body, headers: { 'Content-Type': upload.contentType } })).status).toBe(201);
    const after = (await scrape(metricsPort)).text;
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('logistics_job_duration_seconds_count', { job: 'render-invoice-pdf', outcome: 'completed' })).toBe(1);
    expect(delta('logistics_job_duration_seconds_count', { job: 'store-order-file', outcome: 'completed' })).toBe(1);
    expect(delta('logistics_pdf_render_duration_seconds_count')).toBe(1);
    expect(delta('logistics_uploaded_files_total', { outcome: 'stored' })).toBe(1);
    expect(delta('logistics_uploaded_bytes_total')).toBe(PDF_BYTES.length);
    expect(after).toContain('# TYPE logistics_pdf_render_failures_total counter');
  });

  it('when a client is rate limited, then the rejections are counted by route', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i += 1) statuses.push((await api.call('/orders/file-categories', { as: 'alpine' })).status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
    const { text } = await scrape(metricsPort);
    expect(sample(text, 'http_rate_limit_rejections_total', { route: '/v1/orders/file-categories' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { route: '/v1/orders/file-categories', status: '429' })).toBe(1);
  });

  it('when /metrics is asked on the API port, then 404: metrics never face clients', async () => {
    const response = await fetch(`${api.root}/metrics`);
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain('http_request_duration_seconds');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
  });

  it('when a second server runs in the same process, then each has its own registry and counts', async () => {
    const otherPort = await freePort();
    const other = await startTestApi({ METRICS_PORT: String(otherPort) });
    try {
      expect((await other.call('/orders/by-nr?nr=0412')).status).toBe(200);
      expect(sample((await scrape(otherPort)).text, 'http_request_duration_seconds_count', { route: '/v1/orders/by-nr', status: '200' })).toBe(1);
      expect(sample((await scrape(metricsPort)).text, 'http_request_duration_seconds_count', { route: '/v1/orders/by-nr' })).toBe(0);
    } finally {
      await other.stop();
    }
    // Stopping the server closes its metrics listener too.
    await expect(fetch(`http://127.0.0.1:${otherPort}/metrics`)).rejects.toThrow();
  });

  it('when METRICS_PORT is 0, then no metrics listener is started; otherwise the server reports where it is', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'logi-metrics-'));
    const port = await freePort();
    try {
      for (const [metricsPort, expected] of [
        ['0', null],
        [String(port), `http://127.0.0.1:${port}/metrics`],
      ] as const) {
        const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', METRICS_PORT: metricsPort });
        const server = await startServer(buildContainer(config, pino({ level: 'silent' })));
        try {
          expect(server.metricsUrl).toBe(expected);
        } finally {
          await server.stop();
        }
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
