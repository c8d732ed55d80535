import Router from '@koa/router';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { BullmqQueueInspector } from '@logi/adapters';
import type { AppState } from '../../http/app-state.js';
import { basicAuth } from './basic-auth.middleware.js';

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
export function createDashboardRouter(inspector: BullmqQueueInspector, credentials: { user: string; password: string }): Router<AppState> {
  const serverAdapter = new KoaAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: inspector.queues.map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Logistics queues' } },
  });
  const dashboard = serverAdapter.registerPlugin();
  const router = new Router<AppState>();
  router.register([DASHBOARD_PATH, `${DASHBOARD_PATH}/{*rest}`], DASHBOARD_METHODS, [
    basicAuth(credentials, 'Queue dashboard'),
    async (ctx, next) => {
      ctx.set('Cache-Control', 'no-store');
      // bull-board's inner router names its own pattern ('/'); the request log should keep ours.
      const matchedRoute = (ctx as { _matchedRoute?: string })._matchedRoute;
      await dashboard(ctx as never, next);
      (ctx as { _matchedRoute?: string })._matchedRoute = matchedRoute;
      // bull-board answers its own errors (Redis gone, say) and tells nobody; the log should know.
      if (ctx.status >= 500) ctx.state.log.warn({ status: ctx.status, body: ctx.body }, 'queue dashboard request failed');
    },
  ]);
  return router;
}
