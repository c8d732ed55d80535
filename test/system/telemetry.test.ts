import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnex, loadFixtures, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { authHeaders } from '../support/api-harness.js';
import { ApiProcess } from '../support/api-process.js';
import { OtlpReceiver, SpanKind, type ReceivedSpan } from '../support/otlp-receiver.js';
import { ProductionStack } from '../support/production-stack.js';
import { testFixture } from '../support/test-fixture.js';
import type { WorkerProcess } from '../support/worker-process.js';

const WATCH_PRELOAD = path.resolve(import.meta.dirname, '../support/module-watch.preload.ts');
/**
 * OpenTelemetry's SDK, exporters and instrumentations, the loader hooks they
 * bring, and this project's modules that use them. Not the API package alone:
 * prom-client loads it (a no-op until an SDK registers) for its exemplars.
 */
const OTEL_MODULES = String.raw`/node_modules/(@opentelemetry/(?!api/)[^/]+|import-in-the-middle|require-in-the-middle|bullmq-otel)/|/opentelemetry/(node-sdk\.telemetry|tracing-pdf\.renderer)`;

/** Tracing on, exporting OTLP/HTTP JSON to `receiver` within about 100 ms of a span's end. */
function otelEnv(receiver: OtlpReceiver, serviceName: string): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: serviceName,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
}

function traceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

/** The span and its ancestors within `spans`, nearest first. */
function chainOf(span: ReceivedSpan, spans: ReceivedSpan[]): ReceivedSpan[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain = [span];
  for (let parent = byId.get(span.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) chain.push(parent);
  return chain;
}

describe('OpenTelemetry traces', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  describe('on the production profile', () => {
    let stack: ProductionStack;
    let dataDir: string;
    let worker: WorkerProcess;
    let api: ApiProcess & { url: string };
    beforeAll(async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-telemetry-'));
      stack = await ProductionStack.start('telemetry');
      const knex = createKnex({ databaseUrl: stack.env.DATABASE_URL!, dataDir });
      try {
        await migrateLatest(knex);
        await loadFixtures(knex, testFixture, { hasher: new Sha256ApiKeyHasher() });
      } finally {
        await knex.destroy();
      }
      worker = await stack.startWorker(dataDir, otelEnv(receiver, 'logi-worker'));
      api = await ApiProcess.start({ ...stack.env, DATA_DIR: dataDir, ...otelEnv(receiver, 'logi-api') });
    });
    afterAll(async () => {
      await api?.stop();
      await stack?.stop();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('when a PDF is asked for with a traceparent, then its request is one trace with spans of the API and of the worker, each with its parent', async () => {
      const incoming = traceparent();
      const response = await fetch(`${api.url}/v1/invoices/9001/pdf`, { headers: { ...authHeaders('baltic'), traceparent: incoming.header } });
      expect(response.status).toBe(200);
      expect(
        Buffer.from(await response.arrayBuffer())
          .subarray(0, 5)
          .toString(),
      ).toBe('%PDF-');

      // Each process exports on its own schedule: wait until both have sent what the request made.
      const trace = await receiver.waitFor((spans) => {
        const mine = spans.filter((s) => s.traceId === incoming.traceId);
        const apiServer = mine.find((s) => s.service === 'logi-api' && s.kind === SpanKind.SERVER);
        const workerRender = mine.find((s) => s.service === 'logi-worker' && s.name === 'chromium render');
        const workerJob = mine.find((s) => s.service === 'logi-worker' && s.kind === SpanKind.CONSUMER);
        return apiServer && workerRender && workerJob && mine;
      });
      const from = (service: string) => trace.filter((s) => s.service === service);

      // The API's request: its server span continues the caller's trace, the route span is its child.
      const server = from('logi-api').find((s) => s.kind === SpanKind.SERVER)!;
      expect(server.parentSpanId).toBe(incoming.spanId);
      expect(server.name).toBe('GET /v1/invoices/:invoiceId/pdf');
      const route = from('logi-api').find((s) => s.scope.includes('instrumentation-koa'))!;
      expect(route.name).toBe('router - /v1/invoices/:invoiceId/pdf');
      expect(route.parentSpanId).toBe(server.spanId);

      // Every span of the trace, in either process, leads up to the API's server span and from there to the caller.
      for (const span of trace) {
        const chain = chainOf(span, trace);
        expect(
          chain.map((s) => s.spanId),
          `${span.service}/${span.name}`,
        ).toContain(server.spanId);
        expect(chain.at(-1)!.parentSpanId).toBe(incoming.spanId);
      }

      // The job: added by the API (producer), run by the worker (consumer) as the add's child.
      const add = from('logi-api').find((s) => s.kind === SpanKind.PRODUCER)!;
      expect(add.name).toMatch(/^add /);
      const job = from('logi-worker').find((s) => s.kind === SpanKind.CONSUMER)!;
      expect(job.name).toMatch(/^process /);
      expect(job.parentSpanId).toBe(add.spanId);
      // One trace: nothing of this request or its job went to another one.
      const jobId = job.attributes['bullmq.job.id'];
      expect(add.attributes['bullmq.job.id']).toBe(jobId);
      const elsewhere = receiver.spans.filter((s) => s.traceId !== incoming.traceId && (s.service === 'logi-api' || s.service === 'logi-worker'));
      expect(elsewhere.filter((s) => s.attributes['bullmq.job.id'] === jobId || s.kind === SpanKind.SERVER || s.name === 'chromium render')).toEqual([]);

      // In the worker, under the job: the database, Chromium's render and the upload of the PDF to S3.
      const underJob = (span: ReceivedSpan) => chainOf(span, trace).some((s) => s.spanId === job.spanId);
      const workerSpans = from('logi-worker').filter(underJob);
      expect(
        workerSpans.filter((s) => s.scope.includes('instrumentation-knex') && String(s.attributes['db.system.name']).startsWith('mysql')).length,
      ).toBeGreaterThan(0);
      expect(workerSpans.filter((s) => s.name === 'chromium render')).toHaveLength(1);
      const s3Port = new URL(stack.s3.endPoint).port;
      const storage = workerSpans.filter(
        (s) => s.kind === SpanKind.CLIENT && s.scope.includes('instrumentation-http') && String(s.attributes['server.port']) === s3Port,
      );
      expect(storage.map((s) => s.attributes['http.request.method'])).toContain('PUT');
      // Redis: the job's commands in the worker, and the API's (rate limit, adding the job).
      expect(workerSpans.filter((s) => s.scope.includes('instrumentation-ioredis')).length).toBeGreaterThan(0);
      expect(from('logi-api').filter((s) => s.scope.includes('instrumentation-ioredis')).length).toBeGreaterThan(0);
      // The API's own queries (the client, the invoice) are in the trace too.
      expect(from('logi-api').filter((s) => s.scope.includes('instrumentation-knex')).length).toBeGreaterThan(0);

      // Log lines of the request, in both processes, carry its trace id.
      const requestLine = api.logs.find((line) => line.msg === 'request' && line.route === '/v1/invoices/:invoiceId/pdf');
      expect(requestLine?.trace_id).toBe(incoming.traceId);
      const jobLines = worker.logs.filter((line) => line.msg === 'job started' || line.msg === 'job completed');
      expect(jobLines.length).toBeGreaterThanOrEqual(2);
      for (const line of jobLines) expect(line.trace_id).toBe(incoming.traceId);
      expect(receiver.refused).toEqual([]);
    });

    it("when a file link is fetched, then its token (the file's credential) is in no span and no log line: url.path holds [REDACTED]", async () => {
      const incoming = traceparent();
      // Any token will do: the route reads it from the path whatever it grants (this one is refused, 403).
      const token = `${randomBytes(24).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
      const response = await fetch(`${api.url}/v1/file-links/${token}?download=1`, { headers: { traceparent: incoming.header } });
      expect(response.status).toBe(403);
      await response.body?.cancel();

      const server = await receiver.waitFor((spans) =>
        spans.find((s) => s.traceId === incoming.traceId && s.service === 'logi-api' && s.kind === SpanKind.SERVER),
      );
      expect(server.name).toBe('GET /v1/file-links/:token');
      expect(server.attributes['url.path']).toBe('/v1/file-links/[REDACTED]');
      expect(server.attributes['http.route']).toBe('/v1/file-links/:token');
      await expect.poll(() => api.logs.some((line) => line.msg === 'request' && line.trace_id === incoming.traceId)).toBe(true);
      const mine = receiver.spans.filter((s) => s.traceId === incoming.traceId);
      expect(mine.length).toBeGreaterThan(0);
      const secret = token.split('.')[0]!;
      for (const span of mine) expect(JSON.stringify(span), `${span.service}/${span.name}`).not.toContain(secret);
      for (const line of api.logs) expect(JSON.stringify(line)).not.toContain(secret);
      const requestLine = api.logs.find((line) => line.msg === 'request' && line.trace_id === incoming.traceId);
      expect(requestLine).toMatchObject({ route: '/v1/file-links/:token', status: 403 });
    });
  });

  describe('loading', () => {
    let dataDir: string;
    beforeAll(async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-telemetry-off-'));
      const knex = createKnex({ databaseUrl: null, dataDir });
      await migrateLatest(knex);
      await loadFixtures(knex, testFixture, { hasher: new Sha256ApiKeyHasher() });
      await knex.destroy();
    });
    afterAll(async () => {
      await rm(dataDir, { recursive: true, force: true });
    });

    /** Starts the API with the module watch, serves a list and a PDF (rendered: each test asks for another invoice), stops it; resolves with the watched modules it loaded. */
    async function modulesLoadedBy(env: Record<string, string>, invoiceId: number): Promise<string[]> {
      const record = path.join(dataDir, `modules-${randomBytes(4).toString('hex')}.txt`);
      await writeFile(record, '');
      const api = await ApiProcess.start({ DATA_DIR: dataDir, MODULE_WATCH_FILE: record, MODULE_WATCH_PATTERN: OTEL_MODULES, ...env }, [
        '--import',
        WATCH_PRELOAD,
      ]);
      try {
        expect((await fetch(`${api.url}/v1/invoices`, { headers: authHeaders('baltic') })).status).toBe(200);
        expect((await fetch(`${api.url}/v1/invoices/${invoiceId}/pdf`, { headers: authHeaders('baltic') })).status).toBe(200);
      } finally {
        expect(await api.stop()).toBe(0);
      }
      return (await readFile(record, 'utf8')).split('\n').filter(Boolean);
    }

    it('when no OTEL_* variable asks for traces, then no OpenTelemetry module is loaded', async () => {
      expect(await modulesLoadedBy({ OTEL_SERVICE_NAME: 'logi-api' }, 9002)).toEqual([]);
    });

    it('when OTEL_TRACES_EXPORTER is none, then no OpenTelemetry module is loaded even with an endpoint', async () => {
      expect(await modulesLoadedBy({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_EXPORTER: 'none' }, 9003)).toEqual([]);
    });

    it('when OTEL_EXPORTER_OTLP_ENDPOINT is set, then the SDK is loaded and the embedded profile traces the job in the request', async () => {
      const loaded = await modulesLoadedBy(otelEnv(receiver, 'logi-embedded'), 9004);
      // The same watch sees them when they do load: the test above could fail.
      expect(loaded.some((file) => file.includes('@opentelemetry/sdk-node'))).toBe(true);
      const spans = await receiver.waitFor((all) => {
        const render = all.find((s) => s.service === 'logi-embedded' && s.name === 'chromium render');
        return render && all.filter((s) => s.traceId === render.traceId);
      });
      const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
      expect(server.name).toBe('GET /v1/invoices/:invoiceId/pdf');
      // Jobs run in the API's process here: the render is in the request's trace, under its route.
      const render = spans.find((s) => s.name === 'chromium render')!;
      expect(chainOf(render, spans).map((s) => s.spanId)).toContain(server.spanId);
    });
  });
});
