import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import { TcpProxy } from '../support/tcp-proxy.js';

/** Faults of the production profile: MariaDB, Redis, an S3 server and worker processes. */

function upload(api: TestApi, names = ['one.pdf', 'two.pdf']) {
  // Bytes of their own per file and call: bytes the order already has would be duplicates, not stored again.
  const { body, contentType } = multipart(
    names.map((filename) => ({ name: 'files', filename, content: Buffer.concat([PDF_BYTES, Buffer.from(`${filename} ${randomUUID()}`)]) })),
  );
  return api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } });
}

async function fileRows(api: TestApi): Promise<number> {
  const [row] = await api.knex('order_files').count({ n: '*' });
  return Number(row!.n);
}

describe('when no worker runs', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ JOB_TIMEOUT_MS: '2000' }, { profile: 'production', worker: false, label: 'noworker' });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('then a PDF and an upload answer 503 with Retry-After within the job timeout, and nothing is left behind', async () => {
    const started = Date.now();
    const pdf = await api.call('/invoices/9001/pdf');
    expect(pdf.status).toBe(503);
    expect(Number(pdf.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await envelopeOf(pdf)).toEqual({ status: 503, message: 'Service Unavailable', data: null });
    const files = await upload(api);
    expect(files.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(await fileRows(api)).toBe(0);
    // The objects the API wrote go once their jobs can commit nothing more (a commit's time after the deadline).
    await expect.poll(() => api.objectKeys(), { timeout: 10_000, interval: 100 }).toEqual([]);
  });

  it('then, once a worker starts, the same requests succeed without restarting the API', async () => {
    await api.stack!.startWorker(api.dataDir);
    // JOB_TIMEOUT_MS is 2 s here: a worker's first render launches its browser, which on a loaded machine
    // can take longer (a 503 the client retries); wait for the state, a PDF served, within a bound.
    await expect.poll(async () => (await api.call('/invoices/9001/pdf')).status, { timeout: 30_000, interval: 500 }).toBe(200);
    expect((await upload(api)).status).toBe(201);
  });
});

describe('when a worker is killed in the middle of a job', () => {
  let api: TestApi;
  let slowBrowserDir: string;
  beforeAll(async () => {
    api = await startTestApi({ JOB_TIMEOUT_MS: '60000', JOB_LOCK_MS: '2000' }, { profile: 'production', label: 'killed', worker: false });
    // The first worker's browser takes 30 s to start, so the job is surely running when the worker dies.
    slowBrowserDir = await mkdtemp(path.join(os.tmpdir(), 'slow-chromium-'));
    const slowBrowser = path.join(slowBrowserDir, 'chromium');
    await writeFile(slowBrowser, '#!/bin/sh\nsleep 30\nexec /usr/bin/chromium "$@"\n', { mode: 0o755 });
    await api.stack!.startWorker(api.dataDir, { JOB_LOCK_MS: '2000', CHROMIUM_PATH: slowBrowser });
  });
  afterAll(async () => {
    await api?.stop();
    await rm(slowBrowserDir, { recursive: true, force: true });
  });

  it('then another worker takes the job over and the client still gets its PDF', async () => {
    const first = api.stack!.workers[0]!;
    const pending = api.call('/invoices/9001/pdf?lang=de');
    await expect.poll(() => first.logs.some((line) => line.msg === 'job started' && line.job === 'render-invoice-pdf'), { timeout: 20_000 }).toBe(true);
    await first.kill();
    const second = await api.stack!.startWorker(api.dataDir, { JOB_LOCK_MS: '2000' });
    const response = await pending;
    expect(response.status).toBe(200);
    expect(
      Buffer.from(await response.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    // The client hears of the completion through Redis, which can overtake the worker's log line on its
    // stdout pipe: wait for the line itself rather than expect it to be read already.
    await expect.poll(() => second.logs.some((line) => line.msg === 'job completed' && line.job === 'render-invoice-pdf'), { timeout: 10_000 }).toBe(true);
    expect(first.logs.some((line) => line.msg === 'job completed')).toBe(false);
    // The rendered PDF was handed over and removed: only its cached copy stays in storage.
    expect((await api.objectKeys()).map((key) => key.replace(/[0-9a-f]{64}\.[0-9a-f]+/, '<hash>.<owner>'))).toEqual(['pdf-cache/<hash>.<owner>.pdf']);
  });
});

describe('when the S3 server stops', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({}, { profile: 'production', label: 's3down' });
  });
  afterAll(async () => {
    await api?.stack?.s3.start();
    await api?.stop();
  });

  it('then every file fails with a readable error, the answer is 422, nothing is half-written, and uploads work again once it is back', async () => {
    expect((await upload(api, ['warmup.pdf'])).status).toBe(201);
    const before = await api.objectKeys();
    await api.stack!.s3.stop();
    const response = await upload(api);
    expect(response.status).toBe(422);
    const body = await envelopeOf(response);
    expect(body.message).toBe('No files were uploaded');
    expect(body.data.uploaded).toEqual([]);
    expect(body.data.failed).toEqual([
      { name: 'one.pdf', error: expect.stringMatching(/^Storage unavailable/) },
      { name: 'two.pdf', error: expect.stringMatching(/^Storage unavailable/) },
    ]);
    expect(await fileRows(api)).toBe(1);
    await api.stack!.s3.start();
    expect(await api.objectKeys()).toEqual(before);
    const healed = await upload(api);
    expect(healed.status).toBe(201);
    expect(await fileRows(api)).toBe(3);
  });
});

describe('when Redis goes away', () => {
  let api: TestApi;
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await TcpProxy.start('127.0.0.1', 6379);
    const { host, port } = proxy.address;
    api = await startTestApi({ REDIS_URL: `redis://${host}:${port}`, JOB_TIMEOUT_MS: '5000' }, { profile: 'production', label: 'redisdown' });
  });
  afterAll(async () => {
    await proxy?.restore();
    await api?.stop();
    await proxy?.cut();
  });
  afterEach(async () => {
    await proxy.restore();
  });

  it('then lists and cached PDFs still answer (rate limiting fails open), renders answer 503 fast, and all heals once Redis is back', async () => {
    // The cached copy the cut must not reach past: a cold worker's first render may outlast JOB_TIMEOUT_MS on a loaded machine (503), so ask until it is there.
    await expect.poll(async () => (await api.call('/invoices/9001/pdf')).status, { timeout: 30_000, interval: 500 }).toBe(200);
    await proxy.cut();
    const started = Date.now();
    const list = await api.call('/invoices?per_page=1');
    expect(list.status).toBe(200);
    // Rendered before the cut: read from the PDF cache, no job needed.
    const cached = await api.call('/invoices/9001/pdf');
    expect(cached.status).toBe(200);
    // Never rendered in this language: needs a job, and the queue is gone.
    const pdf = await api.call('/invoices/9001/pdf?lang=de');
    expect(pdf.status).toBe(503);
    expect(pdf.headers.get('retry-after')).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(5000);
    await proxy.restore();
    await expect.poll(async () => (await api.call('/invoices/9001/pdf?lang=de')).status, { timeout: 20_000, interval: 500 }).toBe(200);
  });
});

describe('when Redis goes away while a request waits on its job', () => {
  let api: TestApi;
  let proxy: TcpProxy;
  let admin: Redis;
  beforeAll(async () => {
    proxy = await TcpProxy.start('127.0.0.1', 6379);
    const { host, port } = proxy.address;
    // No worker: the job stays queued, so its caller is surely still waiting when Redis goes.
    api = await startTestApi(
      { REDIS_URL: `redis://${host}:${port}`, JOB_TIMEOUT_MS: '20000' },
      { profile: 'production', worker: false, label: 'redismidwait' },
    );
    admin = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    await proxy?.restore();
    await api?.stop();
    await proxy?.cut();
    await admin?.quit();
  });

  it('then the waiting request answers 503 within seconds, not at JOB_TIMEOUT_MS, and PDFs work again once Redis and a worker are back', async () => {
    const waiting = api.call('/invoices/9001/pdf');
    // Every job waits among the prioritized ones (its priority is its fair share, ADR 0036).
    await expect.poll(() => admin.zcard(`${api.config.redisPrefix}:pdf:prioritized`), { timeout: 10_000, interval: 20 }).toBe(1);
    const cutAt = Date.now();
    await proxy.cut();
    const pdf = await waiting;
    expect(pdf.status).toBe(503);
    expect(pdf.headers.get('retry-after')).not.toBeNull();
    expect(Date.now() - cutAt).toBeLessThan(5_000);
    await proxy.restore();
    await api.stack!.startWorker(api.dataDir);
    await expect.poll(async () => (await api.call('/invoices/9001/pdf')).status, { timeout: 20_000, interval: 500 }).toBe(200);
  });
});
