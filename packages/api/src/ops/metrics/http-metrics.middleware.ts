import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiMetrics } from './api-metrics.js';
import { routePattern } from './route-pattern.js';

/**
 * Times every request and counts 429s. It runs outside the error handler, so
 * the status it records is the one the client got; the routers are given by
 * the app so that the label is the route pattern, not the raw URL.
 */
export function httpMetrics(metrics: ApiMetrics): (routers: Router[]) => Middleware {
  return (routers) => async (ctx, next) => {
    const stopTimer = metrics.httpRequestDuration.startTimer();
    try {
      await next();
    } finally {
      const route = routePattern(routers, ctx.path, ctx.method);
      stopTimer({ method: ctx.method, route, status: String(ctx.status) });
      if (ctx.status === 429) metrics.rateLimitRejections.inc({ route });
    }
  };
}
