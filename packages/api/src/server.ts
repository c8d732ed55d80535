import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Container } from 'inversify';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type Router from '@koa/router';
import { SERVICE_VERSION, type AppConfig } from '@logi/config';
import { withTimeout, type JobQueuePort, type PdfRendererPort } from '@logi/domain';
import { createApp } from './app.js';
import { answerClientError } from './http/client-error.js';
import { applyKeepAlive } from './http/keep-alive.js';
import type { ApiProcessTasks } from './process-tasks.js';
import { Tokens } from './tokens.js';
import { startHousekeeping } from './maintenance/housekeeping.js';
import type { RateLimiter } from './middleware/rate-limiter.js';
import { PARSER_HEAD_BYTES, PARSER_HEADER_COUNT } from './middleware/request-head-limit.middleware.js';
import type { ApiMetrics } from './ops/metrics/api-metrics.js';
import { httpMetrics } from './ops/metrics/http-metrics.middleware.js';
import { createOpsRouters, startQueueDashboard } from './ops/ops-routers.js';

export interface RunningServer {
  url: string;
  port: number;
  /** Where Prometheus scrapes, on its own listener; null when METRICS_PORT is 0. */
  metricsUrl: string | null;
  /** The queue dashboard's page, on its own listener; null when it is off. */
  dashboardUrl: string | null;
  /** The API listener's timeouts for kept-alive connections, as set (HTTP_KEEP_ALIVE_TIMEOUT_MS). */
  keepAlive: { timeoutMs: number; headersTimeoutMs: number };
  /** Stops taking connections, lets in-flight requests finish (bounded), then closes every dependency. */
  stop(): Promise<void>;
}

/** In-flight requests get at least this long to finish on stop... */
const SHUTDOWN_GRACE_MS = 10_000;
/** ...and a request waiting on a job its whole JOB_TIMEOUT_MS gets this much on top, to send its answer. */
const SHUTDOWN_ANSWER_MS = 5_000;
/** Closing the listeners and dependencies takes at most about this long; one that hangs (a dead Redis, a stuck browser) is left behind. */
const CLOSE_DEPENDENCIES_MS = 5_000;
/** Even past the budget, each dependency still gets this long, so the database is not skipped because a browser hung. */
const CLOSE_STEP_MIN_MS = 250;
/** Room for the steps' minimum times and the traces' flush before a stop counts as stuck. */
const STOP_MARGIN_MS = 5_000;

/** How long stop() lets in-flight requests run: a request may wait on a job for the whole job timeout. */
export function shutdownGraceMs(jobTimeoutMs: number): number {
  return Math.max(SHUTDOWN_GRACE_MS, jobTimeoutMs + SHUTDOWN_ANSWER_MS);
}

/** Past this after SIGTERM the process exits anyway: the grace for requests, closing the rest, flushing traces. */
export function stopLimitMs(jobTimeoutMs: number): number {
  return shutdownGraceMs(jobTimeoutMs) + CLOSE_DEPENDENCIES_MS + STOP_MARGIN_MS;
}

export async function startServer(container: Container, options: { publicRouters?: Router[] } = {}): Promise<RunningServer> {
  const config = container.get<AppConfig>(Tokens.Config);
  const logger = container.get<Logger>(Tokens.Logger);
  const metrics = container.get<ApiMetrics>(Tokens.Metrics);
  const app = createApp({
    logger,
    authenticate: container.get(Tokens.AuthenticateClient),
    limiter: container.get(Tokens.RateLimiter),
    listFileCategories: container.get(Tokens.ListFileCategories),
    findOrderByNr: container.get(Tokens.FindOrderByNr),
    attachFiles: container.get(Tokens.AttachFiles),
    orderFiles: container.get(Tokens.OrderFiles),
    receiver: container.get(Tokens.UploadReceiver),
    listInvoices: container.get(Tokens.ListInvoices),
    downloadInvoicePdf: container.get(Tokens.DownloadInvoicePdf),
    downloadEInvoice: container.get(Tokens.DownloadEInvoice),
    listEvents: container.get(Tokens.ListEvents),
    manageWebhooks: container.get(Tokens.ManageWebhooks),
    manageExports: container.get(Tokens.ManageExports),
    exportStorage: container.get(Tokens.FileStorage),
    idempotency: container.get(Tokens.IdempotencyStore),
    secretCipher: container.get(Tokens.SecretCipher),
    publicRouters: [...createOpsRouters(container), ...(options.publicRouters ?? [])],
    observe: httpMetrics(metrics),
    proxyHops: config.trustProxyHops,
  });
  const handle = app.callback();
  // Koa's handler answers its own failures (ctx.onerror): its promise never rejects, nobody waits on it.
  const server = http.createServer({ maxHeaderSize: PARSER_HEAD_BYTES }, (req, res) => void handle(req, res));
  // Every header field reaches the app, so the 64 KiB rule measures what was sent, not the first 2,000 entries.
  server.maxHeadersCount = PARSER_HEADER_COUNT;
  // Requests Node refuses before the app sees them still get the envelope (414 for a query that is too long).
  server.on('clientError', answerClientError);
  // Uploads of 20 x 10 MiB over slow links take a while; idle sockets still close.
  server.requestTimeout = 10 * 60_000;
  applyKeepAlive(server, config.httpKeepAliveTimeoutMs);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url, version: SERVICE_VERSION }, 'API listening');
  const tasks = container.get<ApiProcessTasks>(Tokens.ProcessTasks);
  const metricsListener = await tasks.startMetricsListener().catch(async (error: unknown) => {
    // Without its metrics listener the API does not start half-way: close what is open, then fail,
    // saying which listener it was (PORT and METRICS_PORT may be the same number).
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw Object.assign(new Error(`metrics listener could not start: ${error instanceof Error ? error.message : String(error)}`, { cause: error }), {
      listener: 'metrics',
    });
  });

  const dashboardListener = await startQueueDashboard(container).catch(async (error: unknown) => {
    await metricsListener?.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw Object.assign(new Error(`queue dashboard listener could not start: ${error instanceof Error ? error.message : String(error)}`, { cause: error }), {
      listener: 'dashboard',
    });
  });

  const housekeeping = startHousekeeping(container);
  // The feed's long polls wake as soon as this process stored events.
  const feed = container.get<{ notify(): void; close(): void }>(Tokens.EventFeed);
  const publishing = tasks.startEventPublishing(() => feed.notify());
  // Embedded profile: this process delivers webhooks; with Redis, worker processes do (null).
  const delivering = tasks.startWebhookDelivering();
  // Embedded profile: this process makes exports; with Redis, worker processes do (null).
  const exporting = tasks.startExportRunning();

  return {
    url,
    port,
    metricsUrl: metricsListener?.url ?? null,
    dashboardUrl: dashboardListener ? `${dashboardListener.url}/admin/queues` : null,
    keepAlive: { timeoutMs: server.keepAliveTimeout, headersTimeoutMs: server.headersTimeout },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Long polls answer now with what they have, instead of holding the stop for up to 30 s.
      feed.close();
      server.closeIdleConnections();
      // A kept-alive connection whose request just finished would otherwise hold the stop for keepAliveTimeout.
      const idleSweep = setInterval(() => server.closeIdleConnections(), 200);
      const graceMs = shutdownGraceMs(config.jobTimeoutMs);
      const forced = setTimeout(() => {
        logger.warn({ graceMs }, 'requests still running at the end of the shutdown grace; closing their connections');
        server.closeAllConnections();
      }, graceMs);
      await closed;
      clearTimeout(forced);
      clearInterval(idleSweep);
      // Everything after the requests shares one budget, so stop() ends within the grace plus about that.
      const deadline = Date.now() + CLOSE_DEPENDENCIES_MS;
      const left = () => Math.max(CLOSE_STEP_MIN_MS, deadline - Date.now());
      await withTimeout(async () => metricsListener?.stop(), left()).catch((error: unknown) =>
        logger.warn({ err: error }, 'closing the metrics listener failed'),
      );
      await withTimeout(async () => dashboardListener?.stop(), left()).catch((error: unknown) =>
        logger.warn({ err: error }, 'closing the queue dashboard listener failed'),
      );
      // A sweep under way is waited for (it leaves nothing half done), but not past the budget.
      await withTimeout(() => housekeeping.stop(), left()).catch((error: unknown) => logger.warn({ err: error }, 'stopping housekeeping failed'));
      await withTimeout(() => publishing.stop(), left()).catch((error: unknown) => logger.warn({ err: error }, 'stopping event publishing failed'));
      // An attempt cut short here is sent again by the next process once its lease ends (at least once).
      await withTimeout(async () => exporting?.stop(), left()).catch((error: unknown) => logger.warn({ err: error }, 'stopping exports failed'));
      await withTimeout(async () => delivering?.stop(), left()).catch((error: unknown) => logger.warn({ err: error }, 'stopping webhook delivery failed'));
      await closeDependencies(container, left());
      logger.info('API stopped');
    },
  };
}

/**
 * Closes every dependency, in order, within about `timeoutMs` in all: one
 * that fails or hangs is logged and left behind, so stop() always returns
 * and the ones after it still close. Each is built lazily and cheaply (the
 * browser launches on first render), so asking for one only to close it costs nothing.
 */
export async function closeDependencies(container: Container, timeoutMs = CLOSE_DEPENDENCIES_MS): Promise<void> {
  const logger = container.get<Logger>(Tokens.Logger);
  const deadline = Date.now() + timeoutMs;
  const steps: Array<[string, () => unknown]> = [
    ['job queue', () => container.get<JobQueuePort>(Tokens.JobQueue).close()],
    ['PDF renderer', () => container.get<PdfRendererPort>(Tokens.PdfRenderer).close()],
    ['rate limiter', () => container.get<RateLimiter>(Tokens.RateLimiter).close()],
    ['queue inspector', () => container.get<{ close(): Promise<void> } | null>(Tokens.QueueInspector)?.close()],
    ['Redis connection', () => container.get<Redis | null>(Tokens.Redis)?.quit()],
    ['read replicas', () => container.get<{ close(): Promise<void> } | null>(Tokens.ReadReplicas)?.close()],
    ['database', () => container.get<Knex>(Tokens.Knex).destroy()],
    ['event-loop watch', () => container.get<{ stop(): void }>(Tokens.Liveness).stop()],
  ];
  for (const [what, close] of steps) {
    try {
      await withTimeout(async () => close(), Math.max(CLOSE_STEP_MIN_MS, deadline - Date.now()));
    } catch (error) {
      logger.warn({ err: error }, `closing the ${what} failed`);
    }
  }
}
