import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { AppState } from '../../http/app-state.js';
import { applyKeepAlive } from '../../http/keep-alive.js';
import { errorHandler } from '../../middleware/error-handler.middleware.js';
import { requestContext } from '../../middleware/request-context.middleware.js';
import { routeGuard } from '../../middleware/route-guard.middleware.js';
import { securityHeaders } from '../../middleware/security-headers.middleware.js';
import { basicAuth } from './basic-auth.middleware.js';
import type { DashboardQueues } from './bull-board.plugin.js';
import { createDashboardRouter } from './dashboard.routes.js';
import { loginThrottle } from './login-throttle.middleware.js';

export interface DashboardSettings {
  user: string;
  password: string;
  host: string;
  port: number;
  /** Whether the dashboard may change the queues (DASHBOARD_WRITE). */
  write: boolean;
  /** Trusted proxy hops, as for the API: the throttle reads the client's address the same way. */
  proxyHops: number;
  /** HTTP_KEEP_ALIVE_TIMEOUT_MS, as for the API: operators may reach it through the same kind of load balancer. */
  keepAliveTimeoutMs: number;
}

/** Failed logins per address before the dashboard answers 429, and the window they are counted in. */
export const DASHBOARD_LOGIN_MAX_FAILURES = 5;
export const DASHBOARD_LOGIN_WINDOW_MS = 60_000;

export interface DashboardListener {
  url: string;
  stop(): Promise<void>;
}

/**
 * The queue dashboard on a listener of its own (DASHBOARD_HOST and
 * DASHBOARD_PORT), never on the API's port, so it faces operators only, as
 * the metrics do: request ids and logs, the same envelopes, then failed
 * logins throttled per address, then HTTP Basic auth, then bull-board.
 */
export async function startDashboardServer(inspector: DashboardQueues, settings: DashboardSettings, logger: Logger): Promise<DashboardListener> {
  const router = createDashboardRouter(inspector, { write: settings.write });
  const app = new Koa<AppState>({ proxy: settings.proxyHops > 0, maxIpsCount: settings.proxyHops });
  app.silent = true;
  app.use(securityHeaders());
  app.use(requestContext(logger));
  app.use(errorHandler());
  app.use(routeGuard([router] as Router[]));
  app.use(loginThrottle({ maxFailures: DASHBOARD_LOGIN_MAX_FAILURES, windowMs: DASHBOARD_LOGIN_WINDOW_MS }));
  app.use(basicAuth(settings, 'Queue dashboard'));
  app.use(router.routes());
  const handle = app.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  applyKeepAlive(server, settings.keepAliveTimeoutMs);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`;
  logger.info({ url: `${url}/admin/queues`, write: settings.write }, 'queue dashboard listening');
  return {
    url,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
