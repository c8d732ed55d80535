import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Container } from 'inversify';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type Router from '@koa/router';
import { startMetricsServer, type AppConfig, type BullmqQueueInspector } from '@logi/adapters';
import type { JobQueuePort, PdfRendererPort } from '@logi/domain';
import { createApp } from './app.js';
import { Tokens } from './tokens.js';
import { startHousekeeping } from './maintenance/housekeeping.js';
import type { RateLimiter } from './middleware/rate-limiter.js';
import type { ApiMetrics } from './ops/metrics/api-metrics.js';
import { httpMetrics } from './ops/metrics/http-metrics.middleware.js';
import { createOpsRouters } from './ops/ops-routers.js';

export interface RunningServer {
  url: string;
  port: number;
  /** Where Prometheus scrapes, on its own listener; null when METRICS_PORT is 0. */
  metricsUrl: string | null;
  /** Stops taking connections, lets in-flight requests finish (bounded), then closes every dependency. */
  stop(): Promise<void>;
}

/** Query strings up to 8 KiB must reach the app (to be answered 414 past that), so headers may be larger than Node's default. */
const MAX_HEADER_BYTES = 64 * 1024;
const SHUTDOWN_GRACE_MS = 10_000;

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
    receiver: container.get(Tokens.UploadReceiver),
    listInvoices: container.get(Tokens.ListInvoices),
    downloadInvoicePdf: container.get(Tokens.DownloadInvoicePdf),
    publicRouters: [...createOpsRouters(container), ...(options.publicRouters ?? [])],
    observe: httpMetrics(metrics),
    proxy: config.trustProxy,
  });
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app.callback());
  // Uploads of 20 x 10 MiB over slow links take a while; idle sockets still close.
  server.requestTimeout = 10 * 60_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url }, 'API listening');
  const metricsListener = await startMetricsServer(metrics, config.metrics, logger).catch(async (error: unknown) => {
    // Without its metrics listener the API does not start half-way: close what is open, then fail.
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw error;
  });

  const housekeeping = startHousekeeping(container);

  return {
    url,
    port,
    metricsUrl: metricsListener?.url ?? null,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const forced = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(forced);
      await metricsListener?.stop();
      await housekeeping.stop();
      await closeDependencies(container);
      logger.info('API stopped');
    },
  };
}

/**
 * Closes every dependency. Each is built lazily and cheaply (the browser
 * launches on first render), so asking for one only to close it costs nothing.
 */
export async function closeDependencies(container: Container): Promise<void> {
  await container.get<JobQueuePort>(Tokens.JobQueue).close();
  await container.get<PdfRendererPort>(Tokens.PdfRenderer).close();
  container.get<RateLimiter>(Tokens.RateLimiter).close();
  await container.get<BullmqQueueInspector | null>(Tokens.QueueInspector)?.close();
  await container.get<Redis | null>(Tokens.Redis)?.quit().catch(() => undefined);
  await container.get<Knex>(Tokens.Knex).destroy();
}
