import { apiDescription, type DeploymentFacts } from './api-description.js';
import { componentSchemas, securitySchemes } from './openapi-components.js';
import { sharedResponses } from './openapi-responses.js';
import { EVENTS_TAG, eventPaths } from '../../routes/events.openapi.js';
import { INVOICES_TAG, invoicePaths } from '../../routes/invoices.openapi.js';
import { ORDERS_TAG, orderPaths } from '../../routes/orders.openapi.js';
import { WEBHOOKS_TAG, webhookEndpointPaths, webhooksSection } from '../../routes/webhook-endpoints.openapi.js';

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
    tags: [ORDERS_TAG, INVOICES_TAG, EVENTS_TAG, WEBHOOKS_TAG],
    // Each resource's paths sit beside its routes (routes/*.openapi.ts); the order is the reference's.
    paths: {
      ...orderPaths({ uploadMaxFiles: facts.uploadMaxFiles }),
      ...invoicePaths(),
      ...webhookEndpointPaths(),
      ...eventPaths(),
    },
    webhooks: webhooksSection(),
    components: {
      schemas: componentSchemas(),
      responses: sharedResponses(),
      securitySchemes,
    },
  };
}
