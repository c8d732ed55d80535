import Router from '@koa/router';
import { SERVICE_VERSION } from '@logi/config';
import { Messages } from '@logi/domain';
import type { AppState } from '../../http/app-state.js';
import { respond } from '../../http/respond.js';
import type { ReadinessChecker } from './readiness.checker.js';

/** Whether the process can make progress (its event loop turns on time); the root hands the watch over. */
export interface LivenessProbe {
  state(): { live: boolean; delayMs: number };
}

/** Seconds a load balancer should wait before asking a not-ready instance again. */
const NOT_READY_RETRY_AFTER_SECONDS = 5;

/**
 * Liveness (the process can make progress: its event loop turns on time; a
 * restart is the cure otherwise) and readiness (it can serve its main
 * traffic: the database answers; what only some requests need is reported
 * as degraded). Public and not rate limited: probes come often and carry no
 * credentials. Which probe goes where: docs/operate/runbook.md#probes.
 */
export function createHealthRouter(readiness: ReadinessChecker, liveness: LivenessProbe): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/health/live', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const loop = liveness.state();
    const facts = { uptime_seconds: Math.floor(process.uptime()), event_loop_delay_ms: Math.round(loop.delayMs), version: SERVICE_VERSION };
    if (loop.live) respond(ctx, 200, Messages.OK, { status: 'live', ...facts });
    else respond(ctx, 503, `${Messages.SERVICE_UNAVAILABLE}: event_loop`, { status: 'not live', ...facts });
  });

  router.get('/health/ready', async (ctx) => {
    const report = await readiness.check();
    ctx.set('Cache-Control', 'no-store');
    // Read replicas are named with their state; a skipped one is degraded, never unready (the primary serves their reads).
    const replicas = report.replicas ? { replicas: report.replicas } : {};
    if (report.ready) {
      const status = report.degraded.length ? 'degraded' : 'ready';
      respond(ctx, 200, Messages.OK, { status, checks: report.checks, degraded: report.degraded, ...replicas });
      return;
    }
    ctx.set('Retry-After', String(NOT_READY_RETRY_AFTER_SECONDS));
    respond(ctx, 503, `${Messages.SERVICE_UNAVAILABLE}: ${report.failing.join(', ')}`, {
      status: 'not ready',
      checks: report.checks,
      failing: report.failing,
      degraded: report.degraded,
      ...replicas,
    });
  });

  return router;
}
