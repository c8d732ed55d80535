import type { Middleware } from 'koa';
import type Router from '@koa/router';
import { HttpError } from '../http/http-error.js';

/**
 * Answers what no route will: an unknown path (404), a known path with a
 * method it does not take (405 with Allow), and OPTIONS (204 with Allow,
 * no credentials). Runs before rate limiting so these are never counted.
 */
export function routeGuard(routers: Router[]): Middleware {
  return async (ctx, next) => {
    const matches = routers.map((router) => router.match(ctx.path, ctx.method));
    const allowed = new Set<string>();
    for (const match of matches) for (const layer of match.path) for (const method of layer.methods) allowed.add(method);
    if (allowed.size === 0) throw new HttpError(404);
    allowed.add('OPTIONS');
    const allow = [...allowed].join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', allow);
      ctx.status = 204;
      return;
    }
    if (!matches.some((match) => match.route)) throw new HttpError(405, undefined, { Allow: allow });
    await next();
  };
}
