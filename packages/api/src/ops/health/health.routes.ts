import Router from '@koa/router';
import { SERVICE_VERSION } from '@logi/config';
import { Messages } from '@logi/domain';
import type { AppState } from '../../http/app-state.js';
import { respond } from '../../http/respond.js';
import type { ReadinessChecker } from './readiness.checker.js';

/** Seconds a load balancer should wait before asking a not-ready instance again. */
const NOT_READY_RETRY_AFTER_SECONDS = 5;

/**
 * Liveness (the process answers) and readiness (every dependency answers).
 * Public and not rate limited: probes come often and carry no credentials.
 */
export function createHealthRouter(readiness: ReadinessChecker): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/health/live', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    respond(ctx, 200, Messages.OK, { status: 'live', uptime_seconds: Math.floor(process.uptime()), version: SERVICE_VERSION });
  });

  router.get('/health/ready', async (ctx) => {
    const report = await readiness.check();
    ctx.set('Cache-Control', 'no-store');
    // Read replicas are named with their state, never counted against readiness (the primary serves their reads).
    const replicas = report.replicas ? { replicas: report.replicas, degraded: report.degraded } : {};
    if (report.ready) {
      respond(ctx, 200, Messages.OK, { checks: report.checks, ...replicas });
      return;
    }
    ctx.set('Retry-After', String(NOT_READY_RETRY_AFTER_SECONDS));
    respond(ctx, 503, `${Messages.SERVICE_UNAVAILABLE}: ${report.failing.join(', ')}`, { checks: report.checks, failing: report.failing, ...replicas });
  });

  return router;
}
