import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export interface MetricsListener {
  url: string;
  stop(): Promise<void>;
}

/**
 * Prometheus' scrape endpoint on a listener of its own (METRICS_HOST and
 * METRICS_PORT), so metrics never face the API's clients. Port 0 turns it off.
 * Each process (API or worker) serves its own registry, so two processes on
 * one host need two ports: a taken port stops the process at start rather
 * than leaving it unobserved.
 */
export async function startMetricsServer(
  metrics: { registry: Registry },
  address: { host: string; port: number },
  logger: Logger,
): Promise<MetricsListener | null> {
  if (address.port === 0) return null;
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://metrics').pathname;
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
          ? new Error(`METRICS_PORT ${address.port} on ${address.host} is in use: give each process on a host its own METRICS_PORT (0 turns metrics off)`, { cause: error })
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
