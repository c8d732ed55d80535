import type Router from '@koa/router';
import type { Container } from 'inversify';
import type { Logger } from 'pino';
import type { AppConfig } from '@logi/config';
import { Tokens } from '../tokens.js';
import type { DashboardQueues } from './dashboard/bull-board.plugin.js';
import { createDashboardRouter } from './dashboard/dashboard.routes.js';
import { DocsAssets } from './docs/docs-assets.js';
import { createDocsRouter } from './docs/docs.routes.js';
import { createHealthRouter } from './health/health.routes.js';
import type { ReadinessChecker } from './health/readiness.checker.js';
import { buildOpenApiDocument } from './openapi/openapi-document.js';

/**
 * The operations routers (docs, health, and the queue dashboard when it is on):
 * mounted before the client gate, so they need no client credentials and are not counted.
 */
export function createOpsRouters(container: Container): Router[] {
  const config = container.get<AppConfig>(Tokens.Config);
  const document = buildOpenApiDocument({
    timeZone: config.timeZone,
    rateLimit: config.rateLimit,
    uploadMaxFiles: config.uploadMaxFiles,
    docsBaseUrl: config.docsBaseUrl,
  });
  const routers = [createDocsRouter(document, new DocsAssets()), createHealthRouter(container.get<ReadinessChecker>(Tokens.Readiness))];
  const inspector = container.get<DashboardQueues | null>(Tokens.QueueInspector);
  if (config.dashboard && inspector) {
    routers.push(createDashboardRouter(inspector, config.dashboard));
  } else if (config.dashboard) {
    // Without Redis there are no queues to show: jobs run inside this process.
    container
      .get<Logger>(Tokens.Logger)
      .warn('DASHBOARD_USER and DASHBOARD_PASSWORD are set but neither REDIS_URL nor REDIS_SENTINELS is: the queue dashboard stays off');
  }
  return routers;
}
