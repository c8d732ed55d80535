import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { deleteRedisKeys } from '../support/production-stack.js';

describe('two API processes on one Redis', () => {
  const prefix = `test-shared-${randomBytes(4).toString('hex')}`;
  let first: TestApi;
  let second: TestApi;
  beforeAll(async () => {
    const env = { REDIS_PREFIX: prefix, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_SECONDS: '60' };
    first = await startTestApi(env, { profile: 'production', worker: false, label: 'shared1' });
    second = await startTestApi(env, { profile: 'production', worker: false, label: 'shared2' });
  });
  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    await deleteRedisKeys('redis://127.0.0.1:6379', `${prefix}:*`);
  });

  it('when a client spreads requests over both, then one limit applies to the sum', async () => {
    const statuses = [];
    for (const api of [first, second, first, second]) statuses.push((await api.call('/orders/file-categories')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe('a worker asked to stop during a job', () => {
  let api: TestApi;
  let slowBrowserDir: string;
  beforeAll(async () => {
    api = await startTestApi({ JOB_TIMEOUT_MS: '60000' }, { profile: 'production', worker: false, label: 'graceful' });
    // A browser that takes 3 s to start keeps the job running while the signal arrives.
    slowBrowserDir = await mkdtemp(path.join(os.tmpdir(), 'slow-chromium-'));
    const slowBrowser = path.join(slowBrowserDir, 'chromium');
    await writeFile(slowBrowser, '#!/bin/sh\nsleep 3\nexec /usr/bin/chromium "$@"\n', { mode: 0o755 });
    await api.stack!.startWorker(api.dataDir, { CHROMIUM_PATH: slowBrowser });
  });
  afterAll(async () => {
    await api?.stop();
    await rm(slowBrowserDir, { recursive: true, force: true });
  });

  it('when SIGTERM arrives mid-job, then the job finishes, the client gets its PDF and the worker exits 0', async () => {
    const worker = api.stack!.workers[0]!;
    const pending = api.call('/invoices/9001/pdf');
    await expect.poll(() => worker.logs.some((line) => line.msg === 'job started'), { timeout: 20_000 }).toBe(true);
    const exitCode = worker.stop();
    const response = await pending;
    expect(response.status).toBe(200);
    expect(await exitCode).toBe(0);
    // 'exit' can come before the last lines of the stdout pipe are read.
    await expect.poll(() => worker.logs.some((line) => line.msg === 'job completed')).toBe(true);
  });
});

describe('a request traced into the worker process', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({}, { profile: 'production', label: 'trace' });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('when a client sends X-Request-Id, then the worker logs its PDF and upload jobs under that id', async () => {
    const worker = api.stack!.workers[0]!;
    const pdf = await api.call('/invoices/9001/pdf', { headers: { 'X-Request-Id': 'trace-pdf-7' } });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('x-request-id')).toBe('trace-pdf-7');

    const form = new FormData();
    form.append('files', new Blob(['delivery note']), 'note.txt');
    const upload = await api.call('/orders/3001/files', { method: 'POST', body: form, headers: { 'X-Request-Id': 'trace-upload-7' } });
    expect(upload.status).toBe(201);

    const messagesOf = (id: string) => worker.logs.filter((line) => line.requestId === id).map((line) => `${String(line.job)}: ${String(line.msg)}`);
    await expect.poll(() => messagesOf('trace-pdf-7')).toEqual(['render-invoice-pdf: job started', 'render-invoice-pdf: job completed']);
    await expect.poll(() => messagesOf('trace-upload-7')).toEqual(['store-order-file: job started', 'store-order-file: job completed']);
  });
});
