import { apiDescription, type DeploymentFacts } from './api-description.js';
import { componentSchemas, securitySchemes } from './openapi-components.js';
import { paths } from './openapi-paths.js';
import { webhooksSection } from './webhook-paths.js';
import { sharedResponses } from './openapi-responses.js';

export type OpenApiDocument = Record<string, unknown> & { openapi: string; paths: Record<string, Record<string, unknown>> };

/**
 * The OpenAPI 3.1 document, generated from the zod schemas that validate
 * requests (domain) and mirror responses (mappers), so it cannot drift from
 * what the server does without a test or the compiler noticing.
 */
export function buildOpenApiDocument(facts: DeploymentFacts): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Logistics orders and invoices API',
      version: '1.0.0',
      description: apiDescription(facts),
    },
    servers: [{ url: '/v1', description: 'This server' }],
    security: [
      { bearerAuth: [], clientDirectory: [] },
      { bearerAuth: [], legacyDirectory: [] },
    ],
    tags: [
      { name: 'Orders', description: 'Order lookup, file categories and file uploads.' },
      { name: 'Invoices', description: 'Invoice list, PDF download and EN 16931 e-invoices (UBL, CII).' },
      { name: 'Events', description: 'The change feed: every change to invoices and order files, whoever made it.' },
      { name: 'Webhooks', description: 'Endpoints that receive the same events as signed POSTs (Standard Webhooks), their attempts and replays.' },
    ],
    paths: paths({ uploadMaxFiles: facts.uploadMaxFiles }),
    webhooks: webhooksSection(),
    components: {
      schemas: componentSchemas(),
      responses: sharedResponses(),
      securitySchemes,
    },
  };
}
