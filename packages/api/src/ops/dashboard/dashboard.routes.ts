import Router from '@koa/router';
import type { AppState } from '../../http/app-state.js';
import { basicAuth } from './basic-auth.middleware.js';
// Type only: bull-board itself loads when the dashboard is on (below).
import type { DashboardQueues } from './bull-board.plugin.js';

export const DASHBOARD_PATH = '/admin/queues';

/** The methods bull-board's pages and API use; anything else is the app's 405 envelope. */
const DASHBOARD_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH'];

/**
 * The queue dashboard (bull-board) for operators, under /admin/queues, behind
 * HTTP Basic auth. It is a public router (no client credentials, not rate
 * limited); its paths are registered here so the route guard lets them
 * through, and a path under it that bull-board does not know falls through
 * to the app's 404 envelope.
 */
export function createDashboardRouter(inspector: DashboardQueues, credentials: { user: string; password: string }): Router<AppState> {
  // bull-board loads in the background from here, so an API without the dashboard never loads it.
  const dashboard = import('./bull-board.plugin.js').then((plugin) => plugin.bullBoardMiddleware(inspector, DASHBOARD_PATH));
  // Not an unhandled rejection while no request has asked: a failed load is the answer of each dashboard request.
  dashboard.catch(() => undefined);
  const router = new Router<AppState>();
  router.register([DASHBOARD_PATH, `${DASHBOARD_PATH}/{*rest}`], DASHBOARD_METHODS, [
    basicAuth(credentials, 'Queue dashboard'),
    async (ctx, next) => {
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
