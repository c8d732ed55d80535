import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import { parseSamples, sample, scrapeMetrics } from '../support/prometheus.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The pipeline metrics of the API process (docs/operate/observability.md#metrics), each driven through its real path
 * in the embedded profile, where this process also publishes events, delivers webhooks and makes exports. The worker's
 * share (fair-share waits, deliveries in the production profile): test/system/pipeline-metrics.test.ts.
 */
let api: TestApi;
let receiver: WebhookReceiver;
let metricsPort: number;

beforeAll(async () => {
  metricsPort = await freePort();
  api = await startTestApi(
    {
      METRICS_PORT: String(metricsPort),
      EVENTS_PUBLISH_INTERVAL_MS: '50',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '60',
      WEBHOOK_TIMEOUT_MS: '1000',
      UPLOAD_QUOTA_MB_PER_DAY: '1',
      EXPORT_MAX_INVOICES: '1',
    },
    { label: 'pipeline-metrics', profile: 'embedded' },
  );
  receiver = await WebhookReceiver.start();
});

afterAll(async () => {
  await api?.stop();
  await receiver?.stop();
});

/** A PDF of `kib` KiB, unlike any other. */
function pdfOf(kib: number): Buffer {
  const head = Buffer.concat([PDF_BYTES, Buffer.from(`% ${randomBytes(8).toString('hex')}\n`)]);
  return Buffer.concat([head, Buffer.alloc(Math.max(0, kib * 1024 - head.length), 0x20)]);
}

async function upload(orderId: number, files: Array<[string, Buffer]>) {
  const { body, contentType } = multipart(files.map(([filename, content]) => ({ name: 'files', filename, content, type: 'application/pdf' })));
  const response = await api.call(`/orders/${orderId}/files`, { method: 'POST', body, headers: { 'Content-Type': contentType } });
  const envelope = await envelopeOf(response);
  expect(response.status, JSON.stringify(envelope)).toBe(201);
  return envelope.data as { uploaded: Array<{ id: number }>; failed: Array<{ error: string }> };
}

function json(method: string, path: string, body: unknown) {
  return api.call(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
}

const scrape = () => scrapeMetrics(metricsPort);

describe('pipeline metrics of the API process (embedded profile)', () => {
  it('when files are downloaded directly and by a link, and links are made, then downloads are counted by kind and outcome and links by kind', async () => {
    const before = await scrape();
    const [file] = (await upload(3001, [['cmr.pdf', pdfOf(1)]])).uploaded;
    expect((await api.call(`/orders/3001/files/${file!.id}`)).status).toBe(200);
    expect((await api.call('/orders/3001/files/999999')).status).toBe(404);
    const link = await envelopeOf(await api.call(`/orders/3001/files/${file!.id}/link`, { method: 'POST' }));
    expect(link.status).toBe(201);
    expect((await fetch(link.data.url as string)).status).toBe(200);
    expect((await fetch(`${api.base}/file-links/not-a-token`)).status).toBeGreaterThanOrEqual(400);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('logistics_file_downloads_total', { kind: 'direct', outcome: 'served' })).toBe(1);
    expect(delta('logistics_file_downloads_total', { kind: 'direct', outcome: 'not_found' })).toBe(1);
    expect(delta('logistics_file_downloads_total', { kind: 'link', outcome: 'served' })).toBe(1);
    expect(delta('logistics_file_downloads_total', { kind: 'link', outcome: 'link_invalid' })).toBe(1);
    expect(delta('logistics_file_links_created_total', { kind: 'token' })).toBe(1);
    expect(delta('logistics_file_links_created_total', { kind: 'presigned' })).toBe(0);
  });

  it('when an upload passes the daily quota and exports pass their invoice limit, then the refusals are counted by kind', async () => {
    const before = await scrape();
    const answer = await upload(3002, [
      ['big-1.pdf', pdfOf(700)],
      ['big-2.pdf', pdfOf(700)],
    ]);
    expect(answer.failed).toEqual([{ name: 'big-2.pdf', error: 'Daily upload quota exceeded.' }]);
    const refused = await json('POST', '/exports', { documents: ['ubl'] });
    expect(refused.status).toBe(422);
    const after = await scrape();
    expect(
      sample(after, 'logistics_quota_refusals_total', { kind: 'upload_bytes' }) - sample(before, 'logistics_quota_refusals_total', { kind: 'upload_bytes' }),
    ).toBe(1);
    expect(
      sample(after, 'logistics_quota_refusals_total', { kind: 'export_invoices' }) -
        sample(before, 'logistics_quota_refusals_total', { kind: 'export_invoices' }),
    ).toBe(1);
    // Every kind has its series from the start.
    for (const kind of ['upload_bytes', 'export_active', 'export_storage', 'export_invoices'])
      expect(parseSamples(after).some((s) => s.name === 'logistics_quota_refusals_total' && s.labels.kind === kind)).toBe(true);
  });

  it('when a write is published as an event, then its capture lag is observed', async () => {
    const before = await scrape();
    await api.knex('invoices').where({ id: 9001 }).update({ branch_id: 4242 });
    await expect
      .poll(async () => sample(await scrape(), 'logistics_event_capture_lag_seconds_count') - sample(before, 'logistics_event_capture_lag_seconds_count'), {
        timeout: 10_000,
        interval: 50,
      })
      .toBeGreaterThanOrEqual(1);
    const after = await scrape();
    const sum = sample(after, 'logistics_event_capture_lag_seconds_sum') - sample(before, 'logistics_event_capture_lag_seconds_sum');
    expect(sum).toBeGreaterThanOrEqual(0);
    expect(sum).toBeLessThan(10);
  });

  it('when webhooks are delivered to one endpoint and fail on another, then attempts, failures by reason, the lag and the failing endpoints are exported', async () => {
    const before = await scrape();
    const good = await envelopeOf(await json('POST', '/webhook-endpoints', { url: receiver.url, event_types: ['invoice.updated'] }));
    const closed = `http://127.0.0.1:${await freePort()}/hooks`;
    const bad = await envelopeOf(await json('POST', '/webhook-endpoints', { url: closed, event_types: ['invoice.updated'] }));
    expect([good.status, bad.status]).toEqual([201, 201]);
    await api.knex('invoices').where({ id: 9001 }).update({ branch_id: 4343 });
    await expect
      .poll(
        async () =>
          sample(await scrape(), 'logistics_webhook_attempt_failures_total', { reason: 'connection' }) -
          sample(before, 'logistics_webhook_attempt_failures_total', { reason: 'connection' }),
        {
          timeout: 10_000,
          interval: 50,
        },
      )
      .toBe(1);
    await expect
      .poll(
        async () =>
          sample(await scrape(), 'logistics_webhook_attempts_total', { outcome: 'delivered' }) -
          sample(before, 'logistics_webhook_attempts_total', { outcome: 'delivered' }),
        {
          timeout: 10_000,
          interval: 50,
        },
      )
      .toBe(1);
    // The failure is recorded a moment after it is counted: the gauge reads the database.
    await expect.poll(async () => sample(await scrape(), 'logistics_webhook_endpoints_failing'), { timeout: 10_000, interval: 50 }).toBe(1);
    const after = await scrape();
    expect(
      sample(after, 'logistics_webhook_attempts_total', { outcome: 'failed' }) - sample(before, 'logistics_webhook_attempts_total', { outcome: 'failed' }),
    ).toBe(1);
    expect(sample(after, 'logistics_webhook_delivery_lag_seconds_count') - sample(before, 'logistics_webhook_delivery_lag_seconds_count')).toBe(1);
    expect(sample(after, 'logistics_webhook_delivery_lag_seconds_bucket', { le: '+Inf' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'logistics_webhook_delivery_lag_seconds_sum') - sample(before, 'logistics_webhook_delivery_lag_seconds_sum')).toBeLessThan(10);
    // Ids and addresses never become labels.
    const labels = parseSamples(after)
      .filter((s) => s.name.startsWith('logistics_webhook'))
      .flatMap((s) => Object.values(s.labels));
    expect(labels.filter((value) => value.includes('127.0.0.1') || value === String(bad.data.id))).toEqual([]);
    for (const endpoint of [good, bad]) await api.call(`/webhook-endpoints/${endpoint.data.id}`, { method: 'DELETE' });
    await expect.poll(async () => sample(await scrape(), 'logistics_webhook_endpoints_failing'), { timeout: 10_000, interval: 50 }).toBe(0);
  });

  it('when the readiness probe knows its dependencies, then each one is exported as up', async () => {
    const text = await scrape();
    expect(sample(text, 'logistics_dependency_up', { dependency: 'database' })).toBe(1);
    expect(sample(text, 'logistics_dependency_up', { dependency: 'storage' })).toBe(1);
    expect(
      parseSamples(text)
        .filter((s) => s.name === 'logistics_dependency_up')
        .map((s) => s.labels.dependency)
        .sort(),
    ).toEqual(['database', 'job_queue', 'pdf_renderer', 'storage']);
  });
});
