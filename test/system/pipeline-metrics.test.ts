import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';
import { parseSamples, sample, scrapeMetrics } from '../support/prometheus.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import type { WorkerProcess } from '../support/worker-process.js';

/**
 * The pipeline metrics of a real `pnpm worker` process in the production profile (MariaDB, Redis, an S3 server): the
 * fair-share waits of the jobs it starts, the webhook attempts it makes, and the capture lag of the changes it
 * publishes (the API publishes too: the two registries together count each change once).
 */
describe('pipeline metrics of a worker (production profile)', () => {
  let api: TestApi;
  let worker: WorkerProcess;
  let receiver: WebhookReceiver;
  let workerPort: number;
  let apiPort: number;
  beforeAll(async () => {
    apiPort = await freePort();
    const env = { EVENTS_PUBLISH_INTERVAL_MS: '50', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '60', WEBHOOK_TIMEOUT_MS: '1000' };
    api = await startTestApi({ ...env, METRICS_PORT: String(apiPort) }, { profile: 'production', worker: false, label: 'pmetrics' });
    workerPort = await freePort();
    worker = await api.stack!.startWorker(api.dataDir, { ...env, METRICS_PORT: String(workerPort) });
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await api?.stop();
    await receiver?.stop();
  });

  it('when a PDF is rendered for a request, then its wait from add to start is observed as an interactive job of an idle directory', async () => {
    const before = await scrapeMetrics(workerPort);
    const labels = { queue: 'pdf', kind: 'interactive', directory_class: 'idle' };
    expect((await api.call('/invoices/9001/pdf?lang=de')).status).toBe(200);
    const after = await scrapeMetrics(workerPort);
    expect(sample(after, 'logistics_fair_share_wait_seconds_count', labels) - sample(before, 'logistics_fair_share_wait_seconds_count', labels)).toBe(1);
    const waited = sample(after, 'logistics_fair_share_wait_seconds_sum', labels) - sample(before, 'logistics_fair_share_wait_seconds_sum', labels);
    expect(waited).toBeGreaterThanOrEqual(0);
    expect(waited).toBeLessThan(30);
    expect(parseSamples(after).filter((s) => s.name === 'logistics_fair_share_wait_seconds_count' && s.labels.kind === 'bulk')).toEqual([]);
  });

  it('when the worker delivers a webhook and another endpoint refuses connections, then its registry counts both and the lag; the API reports the failing endpoint', async () => {
    const before = await scrapeMetrics(workerPort);
    const post = (url: string) =>
      api.call('/webhook-endpoints', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ url, event_types: ['invoice.updated'] }),
      });
    const good = await envelopeOf(await post(receiver.url));
    const bad = await envelopeOf(await post(`http://127.0.0.1:${await freePort()}/hooks`));
    expect([good.status, bad.status]).toEqual([201, 201]);
    await api.knex('invoices').where({ id: 9002 }).update({ branch_id: 5151 });
    const delta = async (name: string, labels: Record<string, string> = {}) =>
      sample(await scrapeMetrics(workerPort), name, labels) - sample(before, name, labels);
    await expect.poll(() => delta('logistics_webhook_attempts_total', { outcome: 'delivered' }), { timeout: 15_000, interval: 50 }).toBe(1);
    await expect.poll(() => delta('logistics_webhook_attempt_failures_total', { reason: 'connection' }), { timeout: 15_000, interval: 50 }).toBe(1);
    expect(await delta('logistics_webhook_delivery_lag_seconds_count')).toBe(1);
    await expect.poll(async () => sample(await scrapeMetrics(apiPort), 'logistics_webhook_endpoints_failing'), { timeout: 10_000, interval: 50 }).toBe(1);
    // Published by the API or the worker, whichever took the change first: counted once between them.
    const captured = async () =>
      sample(await scrapeMetrics(workerPort), 'logistics_event_capture_lag_seconds_count') +
      sample(await scrapeMetrics(apiPort), 'logistics_event_capture_lag_seconds_count');
    expect(await captured()).toBeGreaterThanOrEqual(1);
    for (const endpoint of [good, bad]) await api.call(`/webhook-endpoints/${endpoint.data.id}`, { method: 'DELETE' });
  });

  it('when Redis, storage and the database answer, then the API exports each one as up', async () => {
    const text = await scrapeMetrics(apiPort);
    for (const dependency of ['database', 'redis', 'storage', 'job_queue']) expect(sample(text, 'logistics_dependency_up', { dependency })).toBe(1);
    expect(worker.logs.some((line) => line.msg === 'metrics listening')).toBe(true);
  });
});
