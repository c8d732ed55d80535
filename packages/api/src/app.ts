import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import type { AppState } from './http/app-state.js';
import { clientGate } from './middleware/client-gate.middleware.js';
import { errorHandler } from './middleware/error-handler.middleware.js';
import { requestHeadLimit } from './middleware/request-head-limit.middleware.js';
import { requestContext } from './middleware/request-context.middleware.js';
import { routeGuard } from './middleware/route-guard.middleware.js';
import { requiredScopes } from './http/required-scope.js';
import { securityHeaders } from './middleware/security-headers.middleware.js';
import type { RateLimiter } from './middleware/rate-limiter.js';
import { registerInvoiceRoutes, type InvoiceRouteDeps } from './routes/invoices.routes.js';
import { registerOrderRoutes, type OrderRouteDeps } from './routes/orders.routes.js';
import { registerEventRoutes, type EventRouteDeps } from './routes/events.routes.js';
import { registerWebhookEndpointRoutes, type WebhookEndpointRouteDeps } from './routes/webhook-endpoints.routes.js';
import { registerExportRoutes, type ExportRouteDeps } from './routes/exports.routes.js';
import { registerFileLinkRoutes } from './routes/file-links.routes.js';
import type { AuthenticateClientUseCase } from '@logi/domain';

const CLIENT_PREFIX = '/v1';

export interface AppDeps extends OrderRouteDeps, InvoiceRouteDeps, EventRouteDeps, WebhookEndpointRouteDeps, ExportRouteDeps {
  logger: Logger;
  authenticate: AuthenticateClientUseCase;
  limiter: RateLimiter;
  /** Routes that need no credentials and are not rate limited (docs, health). */
  publicRouters?: Router[];
  /** Trusted proxy hops: the per-IP rate limit reads the client from X-Forwarded-For that many entries from the right (0 = the socket's peer). */
  proxyHops?: number;
  /** Wraps every request just inside the request id (metrics); gets the routers to name the route. */
  observe?: (routers: Router[]) => Koa.Middleware<AppState>;
}

/**
 * The HTTP application: request id and logging, then one error handler, then
 * path and method checks, then (client routes only) rate limit and credentials.
 */
export function createApp(deps: AppDeps): Koa<AppState> {
  const hops = deps.proxyHops ?? 0;
  // Koa keeps only the last maxIpsCount entries and takes the first of them: the address the outermost trusted proxy
  // saw. Entries left of it were written by the client and are never read.
  const app = new Koa<AppState>({ proxy: hops > 0, maxIpsCount: hops });
  // Errors are all answered by errorHandler; Koa's own printer would only repeat them.
  app.silent = true;

  const clientRouter = new Router<AppState>({ prefix: CLIENT_PREFIX });
  registerOrderRoutes(clientRouter, deps);
  registerInvoiceRoutes(clientRouter, deps);
  registerEventRoutes(clientRouter, deps);
  registerWebhookEndpointRoutes(clientRouter, deps);
  registerExportRoutes(clientRouter, deps);
  // File links carry their own credential (a signed token), so they sit beside the ops routes, outside the gate.
  const fileLinkRouter = new Router({ prefix: '/v1' });
  registerFileLinkRoutes(fileLinkRouter, { orderFiles: deps.orderFiles, limiter: deps.limiter });
  const publicRouters = [...(deps.publicRouters ?? []), fileLinkRouter];

  app.use(securityHeaders());
  app.use(requestContext(deps.logger));
  if (deps.observe) app.use(deps.observe([clientRouter, ...publicRouters] as Router[]));
  app.use(errorHandler());
  app.use(requestHeadLimit());
  app.use(routeGuard([clientRouter, ...publicRouters] as Router[]));
  for (const router of publicRouters) app.use(router.routes());
  const gate = clientGate({ authenticate: deps.authenticate, limiter: deps.limiter });
  const clientRoutes = clientRouter.routes();
  const gatedClientRoutes: Koa.Middleware<AppState> = async (ctx, next) => {
    const route = clientRouter.match(ctx.path, ctx.method).pathAndMethod.find((layer) => layer.methods.length > 0);
    if (!route) {
      await next();
      return;
    }
    await gate(ctx, requiredScopes(ctx.method, String(route.path).slice(CLIENT_PREFIX.length)), async () => {
      await clientRoutes(ctx as never, next);
    });
  };
  // Marked as @koa/router marks its own dispatch, so tracing (OpenTelemetry's Koa instrumentation) finds the routes behind the gate.
  app.use(Object.assign(gatedClientRoutes, { router: clientRouter }));
  return app;
}
