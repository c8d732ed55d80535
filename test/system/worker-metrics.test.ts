import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import { freePort } from '../support/free-port.js';
import { sample, sampleLine, scrapeMetrics } from '../support/prometheus.js';
import type { WorkerProcess } from '../support/worker-process.js';

/** A real `pnpm worker` process with its own metrics listener, fed by the API in the production profile. */
describe('worker metrics', () => {
  let api: TestApi;
  let worker: WorkerProcess;
  let metricsPort: number;
  beforeAll(async () => {
    api = await startTestApi({}, { profile: 'production', worker: false, label: 'wmetrics' });
    metricsPort = await freePort();
    worker = await api.stack!.startWorker(api.dataDir, { METRICS_PORT: String(metricsPort) });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('when the worker starts, then it serves its own registry on its METRICS_PORT, labelled service="worker"', async () => {
    expect(worker.logs.some((line) => line.msg === 'metrics listening' && line.url === `http://127.0.0.1:${metricsPort}/metrics`)).toBe(true);
    const text = await scrapeMetrics(metricsPort);
    expect(sampleLine(text, 'process_cpu_seconds_total', { service: 'worker' })).toBeDefined();
    // Both queues are there before the first job, at 0, so a dashboard shows a line rather than nothing.
    expect(sampleLine(text, 'logistics_worker_jobs_in_progress', { queue: 'pdf', job: 'render-invoice-pdf' })).toMatch(/ 0$/);
    expect(sampleLine(text, 'logistics_worker_jobs_in_progress', { queue: 'uploads', job: 'store-order-file' })).toMatch(/ 0$/);
    // The API's own series are not here: each process has its own registry.
    expect(text).not.toContain('http_request_duration_seconds');
  });

  it('when a PDF is downloaded through the API, then the worker counts the job by queue and job name, times the render and each stage of the job', async () => {
    const before = await scrapeMetrics(metricsPort);
    const response = await api.call('/invoices/9001/pdf?lang=de');
    expect(response.status).toBe(200);
    expect(
      Buffer.from(await response.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    const pdfJob = { queue: 'pdf', job: 'render-invoice-pdf' };
    const completed = { ...pdfJob, outcome: 'completed' };
    // The API answered once the job handed the PDF over (ADR 0057); the job ends after its cache write.
    const after = await vi.waitFor(
      async () => {
        const text = await scrapeMetrics(metricsPort);
        if (sample(text, 'logistics_worker_job_duration_seconds_count', completed) === sample(before, 'logistics_worker_job_duration_seconds_count', completed))
          throw new Error('the render job has not ended yet');
        return text;
      },
      { timeout: 10_000, interval: 25 },
    );
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('logistics_worker_job_duration_seconds_count', { ...pdfJob, outcome: 'completed' })).toBe(1);
    expect(delta('logistics_worker_job_duration_seconds_sum', { ...pdfJob, outcome: 'completed' })).toBeGreaterThan(0);
    expect(delta('logistics_worker_job_failures_total', pdfJob)).toBe(0);
    expect(delta('logistics_pdf_render_duration_seconds_count')).toBe(1);
    // Where the job's time went, stage by stage (ADR 0054): each stage once, the render on the page taking time.
    for (const stage of ['data', 'cache_lookup', 'page_wait', 'render', 'hand_over', 'store'])
      expect({ stage, count: delta('logistics_pdf_job_stage_seconds_count', { stage, kind: 'interactive' }) }).toEqual({ stage, count: 1 });
    expect(delta('logistics_pdf_job_stage_seconds_sum', { stage: 'render', kind: 'interactive' })).toBeGreaterThan(0);
    expect(delta('logistics_pdf_job_stage_seconds_count', { stage: 'facturx', kind: 'interactive' })).toBe(0);
    expect(sample(after, 'logistics_worker_jobs_in_progress', pdfJob)).toBe(0);
    expect(delta('logistics_worker_job_duration_seconds_count', { queue: 'uploads' })).toBe(0);
  });

  it('when a file is uploaded, then the job is counted on the uploads queue', async () => {
    const before = await scrapeMetrics(metricsPort);
    const upload = multipart([{ name: 'files', filename: 'cmr.pdf', content: PDF_BYTES }]);
    const response = await api.call('/orders/3001/files', { method: 'POST', body: upload.body, headers: { 'Content-Type': upload.contentType } });
    expect(response.status).toBe(201);
    const after = await scrapeMetrics(metricsPort);
    const labels = { queue: 'uploads', job: 'store-order-file', outcome: 'completed' };
    expect(sample(after, 'logistics_worker_job_duration_seconds_count', labels) - sample(before, 'logistics_worker_job_duration_seconds_count', labels)).toBe(
      1,
    );
    // Where the store job's time went: its first run commits the row at once (no look-up, no HEAD of the object).
    const delta = (name: string, stage: string) => sample(after, name, { stage }) - sample(before, name, { stage });
    const counts = Object.fromEntries(['lookup', 'check', 'commit'].map((stage) => [stage, delta('logistics_upload_store_stage_seconds_count', stage)]));
    expect(counts).toEqual({ lookup: 0, check: 0, commit: 1 });
  });

  it('when an export is made, then the worker that made it counts it succeeded with its archive’s bytes, and is not making one after', async () => {
    const before = await scrapeMetrics(metricsPort);
    expect(sample(before, 'logistics_exports_running')).toBe(0);
    const created = await api.call('/exports', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ documents: ['ubl'], csv: true }),
    });
    expect(created.status).toBe(202);
    const { id } = ((await created.json()) as { data: { id: number } }).data;
    let done: { status: string; size: number | null } = { status: 'queued', size: null };
    await expect
      .poll(
        async () => {
          done = ((await (await api.call(`/exports/${id}`)).json()) as { data: typeof done }).data;
          return done.status;
        },
        { timeout: 60_000, interval: 200 },
      )
      .toBe('succeeded');
    const after = await scrapeMetrics(metricsPort);
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('logistics_exports_finished_total', { outcome: 'succeeded' })).toBe(1);
    expect(delta('logistics_exports_finished_total', { outcome: 'failed' })).toBe(0);
    expect(delta('logistics_export_bytes_total')).toBe(done.size);
    expect(sample(after, 'logistics_export_attempt_failures_total', { failure: 'storage', final: 'true' })).toBe(0);
    expect(sample(after, 'logistics_exports_running')).toBe(0);
  });

  it('when a job fails with a domain error, then the failure is counted with its code as the reason', async () => {
    const { REDIS_URL, REDIS_PREFIX } = api.stack!.env;
    const connection = { url: REDIS_URL! };
    const queue = new Queue('pdf', { connection, prefix: REDIS_PREFIX });
    const events = new QueueEvents('pdf', { connection, prefix: REDIS_PREFIX });
    try {
      await events.waitUntilReady();
      const before = await scrapeMetrics(metricsPort);
      // Sent straight to the queue: the API would have answered 404 itself without asking a worker.
      const job = await queue.add('render-invoice-pdf', {
        directory: 'baltic-haulage',
        invoiceId: 987654,
        lang: 'en',
        duplicate: false,
        pdfKey: `pdf/${randomUUID()}.pdf`,
        requestId: 'worker-metrics-test',
        deadline: Date.now() + 30_000,
      });
      await expect(job.waitUntilFinished(events, 20_000)).rejects.toThrow(/INVOICE_NOT_FOUND/);
      const after = await scrapeMetrics(metricsPort);
      const labels = { queue: 'pdf', job: 'render-invoice-pdf' };
      expect(
        sample(after, 'logistics_worker_job_failures_total', { ...labels, reason: 'invoice_not_found' }) -
          sample(before, 'logistics_worker_job_failures_total', { ...labels, reason: 'invoice_not_found' }),
      ).toBe(1);
      expect(
        sample(after, 'logistics_worker_job_duration_seconds_count', { ...labels, outcome: 'failed' }) -
          sample(before, 'logistics_worker_job_duration_seconds_count', { ...labels, outcome: 'failed' }),
      ).toBe(1);
      expect(sample(after, 'logistics_worker_jobs_in_progress', labels)).toBe(0);
    } finally {
      await events.close();
      await queue.close();
    }
  });

  it('when a second worker is given a METRICS_PORT already in use, then it stops at start with one line naming METRICS_PORT', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      await expect(api.stack!.startWorker(api.dataDir, { METRICS_PORT: String(port) })).rejects.toThrow(
        new RegExp(
          `worker exited with 1: Configuration error: METRICS_PORT ${port} on 127\\.0\\.0\\.1 is already in use by another process \\(EADDRINUSE\\)\\n?$`,
        ),
      );
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
