import { SERVICE_VERSION } from '@logi/config';
import { apiDescription, type DeploymentFacts } from './api-description.js';
import { componentSchemas, securitySchemes } from './openapi-components.js';
import { guideLinks } from './guides.js';
import { sharedResponses } from './openapi-responses.js';
import { withRequiredScopes } from './openapi-scopes.js';
import { withIdempotencyKeys } from './openapi-idempotency.js';
import { eventPaths, eventsTag } from '../../routes/events.openapi.js';
import { exportPaths, exportsTag } from '../../routes/exports.openapi.js';
import { invoicePaths, invoicesTag } from '../../routes/invoices.openapi.js';
import { orderPaths, ordersTag } from '../../routes/orders.openapi.js';
import { fileLinkPaths } from '../../routes/file-links.openapi.js';
import { webhookEndpointPaths, webhooksSection, webhooksTag } from '../../routes/webhook-endpoints.openapi.js';

export type OpenApiDocument = Record<string, unknown> & { openapi: string; paths: Record<string, Record<string, unknown>> };

/**
 * The OpenAPI 3.1 document, generated from the zod schemas that validate
 * requests (domain) and mirror responses (mappers), so it cannot drift from
 * what the server does without a test or the compiler noticing.
 */
export function buildOpenApiDocument(facts: DeploymentFacts): OpenApiDocument {
  const guides = guideLinks(facts.docsBaseUrl);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Logistics orders and invoices API',
      version: SERVICE_VERSION,
      description: apiDescription(facts, guides),
    },
    externalDocs: guides.externalDocs('getting-started', 'Getting started, and the guides that explain this reference.'),
    // Relative: every environment serves its own document. `x-internal: false`: the API is for outside client systems (OWASP API9).
    servers: [
      {
        url: '/v1',
        description:
          'The deployment serving this document, whichever environment it is (production, staging, local): each has its own keys and data. For client systems, with an API key of a client directory.',
        'x-internal': false,
      },
    ],
    security: [
      { bearerAuth: [], clientDirectory: [] },
      { bearerAuth: [], legacyDirectory: [] },
    ],
    tags: [ordersTag(guides), invoicesTag(guides), eventsTag(guides), webhooksTag(guides), exportsTag(guides)],
    // Each resource's paths sit beside its routes (routes/*.openapi.ts); the order is the reference's.
    // Each operation states the scope its key needs, and the 403 without it (ops/openapi/openapi-scopes.ts).
    // And the operations that create something take Idempotency-Key (ops/openapi/openapi-idempotency.ts).
    paths: withRequiredScopes(
      withIdempotencyKeys(
        {
          ...orderPaths({ uploadMaxFiles: facts.uploadMaxFiles }, guides),
          ...fileLinkPaths(guides),
          ...invoicePaths(guides),
          ...webhookEndpointPaths(guides),
          ...eventPaths(guides),
          ...exportPaths(guides),
        },
        guides,
      ),
    ),
    webhooks: webhooksSection(guides),
    components: {
      schemas: componentSchemas(),
      responses: sharedResponses(),
      securitySchemes,
    },
  };
}
