import Router from '@koa/router';
import type { AppState } from '../../http/app-state.js';
import { HttpError } from '../../http/http-error.js';
// Type only: bull-board itself loads when the dashboard is on (below).
import type { DashboardQueues } from './bull-board.plugin.js';

export const DASHBOARD_PATH = '/admin/queues';

/** The methods bull-board's pages and API use; anything else is the 405 envelope. */
const DASHBOARD_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH'];
const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * The queue dashboard (bull-board) under /admin/queues, served on its own
 * listener behind HTTP Basic auth (dashboard.server.ts). Read-only unless
 * `write`: then every request that would change a queue (bull-board's API
 * takes them as POST, PUT and PATCH) is 405 before bull-board sees it, and
 * bull-board's own read-only mode hides the buttons and refuses them too.
 */
export function createDashboardRouter(inspector: DashboardQueues, options: { write: boolean }): Router<AppState> {
  // bull-board loads in the background from here, so an API without the dashboard never loads it.
  const dashboard = import('./bull-board.plugin.js').then((plugin) => plugin.bullBoardMiddleware(inspector, DASHBOARD_PATH, options));
  // Not an unhandled rejection while no request has asked: a failed load is the answer of each dashboard request.
  dashboard.catch(() => undefined);
  const router = new Router<AppState>();
  router.register([DASHBOARD_PATH, `${DASHBOARD_PATH}/{*rest}`], DASHBOARD_METHODS, [
    async (ctx, next) => {
      if (!options.write && !READ_METHODS.has(ctx.method)) throw new HttpError(405, undefined, { Allow: 'GET, HEAD, OPTIONS' });
      ctx.set('Cache-Control', 'no-store');
      // bull-board's inner router names its own pattern ('/'); the request log should keep ours.
      const matchedRoute = (ctx as { _matchedRoute?: string })._matchedRoute;
      await (
        await dashboard
      )(ctx, next);
      (ctx as { _matchedRoute?: string })._matchedRoute = matchedRoute;
      // bull-board answers its own errors (Redis gone, say) and tells nobody; the log should know.
      if (ctx.status >= 500) ctx.state.log.warn({ status: ctx.status, body: ctx.body }, 'queue dashboard request failed');
    },
  ]);
  return router;
}
