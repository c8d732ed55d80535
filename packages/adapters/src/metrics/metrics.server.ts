import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { envelope, Messages } from '@logi/domain';

/** A process without an HTTP API of its own (the worker) answers its health probes here. */
export interface HealthProbe {
  /** True once the process does its work, false while it starts or stops. */
  ready(): boolean;
  /**
   * False when the process cannot make progress and only a restart helps (a
   * worker that takes no job while jobs wait, after making its connection
   * anew; an event loop that no longer keeps time). Live when absent.
   */
  live?(): boolean;
}

export interface MetricsListener {
  url: string;
  stop(): Promise<void>;
}

/**
 * Prometheus' scrape endpoint on a listener of its own (METRICS_HOST and
 * METRICS_PORT), so metrics never face the API's clients. Port 0 turns it off.
 * Each process (API or worker) serves its own registry, so two processes on
 * one host need two ports: a taken port stops the process at start rather
 * than leaving it unobserved. Given a health probe, it also answers
 * `/health/live` and `/health/ready` as the API does on its own port.
 */
export async function startMetricsServer(
  metrics: { registry: Registry },
  address: { host: string; port: number },
  logger: Logger,
  health?: HealthProbe,
): Promise<MetricsListener | null> {
  if (address.port === 0) return null;
  const server = http.createServer((req, res) => {
    // Like every answer of the API: a browser takes each body as the type it is sent with.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const path = new URL(req.url ?? '/', 'http://metrics').pathname;
    if (health && (path === '/health/live' || path === '/health/ready') && req.method === 'GET') {
      if (path === '/health/live') answerHealth(res, health.live?.() === false ? 'not live' : 'live');
      else answerHealth(res, health.ready() ? 'ready' : 'not ready');
      return;
    }
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(path === '/metrics' ? 405 : 404, { 'Content-Type': 'text/plain; charset=utf-8', ...(path === '/metrics' ? { Allow: 'GET, HEAD' } : {}) });
      res.end(path === '/metrics' ? 'Method Not Allowed\n' : 'Not Found\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'metrics collection failed');
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('Server Error\n');
      },
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`METRICS_PORT ${address.port} on ${address.host} is in use: give each process on a host its own METRICS_PORT (0 turns metrics off)`, {
              cause: error,
            })
          : error,
      ),
    );
    server.listen(address.port, address.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${address.host.includes(':') ? `[${address.host}]` : address.host}:${port}/metrics`;
  logger.info({ url }, 'metrics listening');
  return {
    url,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A scraper's keep-alive socket must not hold the shutdown.
      server.closeAllConnections();
      await closed;
    },
  };
}

function answerHealth(res: http.ServerResponse, status: 'live' | 'not live' | 'ready' | 'not ready'): void {
  const body =
    status === 'not ready' || status === 'not live'
      ? envelope(503, Messages.SERVICE_UNAVAILABLE, { status })
      : envelope(200, Messages.OK, status === 'live' ? { status, uptime_seconds: Math.floor(process.uptime()) } : { status });
  res.writeHead(body.status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}
