import type Router from '@koa/router';
import type { Container } from 'inversify';
import type { Logger } from 'pino';
import type { AppConfig } from '@logi/config';
import { Tokens } from '../tokens.js';
import type { DashboardQueues } from './dashboard/bull-board.plugin.js';
import type { DashboardListener } from './dashboard/dashboard.server.js';
import { DocsAssets } from './docs/docs-assets.js';
import { createDocsRouter } from './docs/docs.routes.js';
import { GuidePages, guidesDirectory } from './docs/guide-pages.js';
import { createHealthRouter, type LivenessProbe } from './health/health.routes.js';
import type { ReadinessChecker } from './health/readiness.checker.js';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi/openapi-document.js';

/** The document GET /v1/openapi.json serves with this configuration (scripts/openapi-lint.ts lints this very one). */
export function servedOpenApiDocument(config: AppConfig): OpenApiDocument {
  return buildOpenApiDocument({
    timeZone: config.timeZone,
    rateLimit: config.rateLimit,
    uploadMaxFiles: config.uploadMaxFiles,
    docsBaseUrl: config.docsBaseUrl,
  });
}

/**
 * The operations routers (docs, health): mounted before the client gate, so
 * they need no client credentials and are not counted. The queue dashboard
 * has a listener of its own (startQueueDashboard).
 */
export function createOpsRouters(container: Container): Router[] {
  const config = container.get<AppConfig>(Tokens.Config);
  const document = servedOpenApiDocument(config);
  return [
    createDocsRouter(document, new DocsAssets(), new GuidePages(guidesDirectory(), config.docsBaseUrl)),
    createHealthRouter(container.get<ReadinessChecker>(Tokens.Readiness), container.get<LivenessProbe>(Tokens.Liveness)),
  ];
}

/**
 * The queue dashboard on DASHBOARD_HOST:DASHBOARD_PORT when it is on (its
 * credentials set, Redis there to show); null otherwise. Imported only then:
 * bull-board and its page renderer are about a fifth of the API's start-up.
 */
export async function startQueueDashboard(container: Container): Promise<DashboardListener | null> {
  const config = container.get<AppConfig>(Tokens.Config);
  if (!config.dashboard) return null;
  const logger = container.get<Logger>(Tokens.Logger);
  const inspector = container.get<DashboardQueues | null>(Tokens.QueueInspector);
  if (!inspector) {
    // Without Redis there are no queues to show: jobs run inside this process.
    logger.warn('DASHBOARD_USER and DASHBOARD_PASSWORD are set but neither REDIS_URL nor REDIS_SENTINELS is: the queue dashboard stays off');
    return null;
  }
  const { startDashboardServer } = await import('./dashboard/dashboard.server.js');
  return startDashboardServer(inspector, { ...config.dashboard, proxyHops: config.trustProxyHops, keepAliveTimeoutMs: config.httpKeepAliveTimeoutMs }, logger);
}
