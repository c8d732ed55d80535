import type { IncomingMessage } from 'node:http';
import { register } from 'node:module';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { KnexInstrumentation } from '@opentelemetry/instrumentation-knex';
import { KoaInstrumentation, KoaLayerType } from '@opentelemetry/instrumentation-koa';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BullMQOtel } from 'bullmq-otel';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { withTimeout, type PdfRendererPort } from '@logi/domain';
import type { Telemetry } from './telemetry.js';
import { TracingPdfRenderer } from './tracing-pdf.renderer.js';

/** How long a shutdown waits for the last spans to reach the collector. */
const SHUTDOWN_FLUSH_MS = 2_000;

/** The name the spans of this code (the render) are recorded under. */
const TRACER_NAME = 'logistics-api';

/**
 * The OpenTelemetry Node SDK, configured by the standard OTEL_* variables
 * (exporter, endpoint, protocol, headers, sampler, propagators, resource,
 * batch sizes), with the instrumentations of what a request touches: its
 * server span and every outgoing HTTP call (S3), the Koa route, knex
 * queries, ioredis commands, BullMQ's jobs, and the trace id on pino's lines.
 */
export async function startNodeSdkTelemetry(
  defaultServiceName: string,
  env: NodeJS.ProcessEnv,
  options: { redactPath?: ((path: string) => string) | undefined } = {},
): Promise<Telemetry> {
  const redactPath = options.redactPath;
  // Packages imported as ES modules (and CommonJS ones an ES module imports) are patched through a
  // loader hook; it wraps only the modules the instrumentations name, and must be in place before they load.
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const sdk = new NodeSDK({
    serviceName: namesService(env) ? undefined : defaultServiceName,
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes come every few seconds and are no one's request.
        ignoreIncomingRequestHook: isProbe,
        // The server span's url.path, else the raw path: a file link's token is a credential (the span's name and
        // http.route are the route's pattern already). Attributes returned here replace the ones the instrumentation read.
        ...(redactPath
          ? { startIncomingSpanHook: (request: IncomingMessage) => ({ 'url.path': redactPath(new URL(request.url ?? '/', 'http://x').pathname) }) }
          : {}),
        // Background work (webhook deliveries, housekeeping) is traced only inside a request or job.
        requireParentforOutgoingSpans: true,
      }),
      // The route's span; one span per middleware would cost more than it tells.
      new KoaInstrumentation({ ignoreLayersType: [KoaLayerType.MIDDLEWARE] }),
      // Queries of a request or a job; the periodic ones (event publishing, leases) start no trace of their own.
      new KnexInstrumentation({ requireParentSpan: true }),
      // The command's name only: its arguments hold job payloads and stored answers.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
      // trace_id and span_id on the log lines; the lines themselves stay on stdout.
      new PinoInstrumentation({ disableLogSending: true }),
    ],
    // Metrics stay with Prometheus (/metrics), logs with stdout: this SDK exports traces only.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();

  const bullmq = new BullMQOtel({ tracerName: 'bullmq' });
  // BullMQ runs its never-ending loops (the events reader, the stalled-job check) outside any request's
  // trace when the context manager can give it the root context.
  Object.assign(bullmq.contextManager, { root: () => ROOT_CONTEXT });
  const tracer = trace.getTracer(TRACER_NAME);
  return {
    bullmq,
    traceRenderer: (renderer: PdfRendererPort) => new TracingPdfRenderer(renderer, tracer),
    async shutdown() {
      await withTimeout(
        sdk.shutdown().catch(() => undefined),
        SHUTDOWN_FLUSH_MS,
        { onTimeout: () => undefined },
      );
    },
  };
}

function namesService(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SERVICE_NAME?.trim()) return true;
  return (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',').some((pair) => pair.split('=')[0]?.trim() === 'service.name');
}

function isProbe(request: IncomingMessage): boolean {
  const path = request.url?.split('?')[0] ?? '';
  return path === '/metrics' || path.startsWith('/health/');
}
