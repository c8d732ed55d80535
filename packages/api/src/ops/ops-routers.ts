import type Router from '@koa/router';
import type { Container } from 'inversify';
import type { AppConfig } from '@logi/adapters';
import { Tokens } from '../tokens.js';
import { DocsAssets } from './docs/docs-assets.js';
import { createDocsRouter } from './docs/docs.routes.js';
import { createHealthRouter } from './health/health.routes.js';
import type { ReadinessChecker } from './health/readiness.checker.js';
import { buildOpenApiDocument } from './openapi/openapi-document.js';

/** The operations routers (docs, health): mounted before the client gate, so they need no credentials and are not counted. */
export function createOpsRouters(container: Container): Router[] {
  const config = container.get<AppConfig>(Tokens.Config);
  const document = buildOpenApiDocument({ timeZone: config.timeZone, rateLimit: config.rateLimit, uploadMaxFiles: config.uploadMaxFiles });
  return [createDocsRouter(document, new DocsAssets()), createHealthRouter(container.get<ReadinessChecker>(Tokens.Readiness))] as unknown as Router[];
}
