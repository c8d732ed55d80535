import { createWebhookEndpointSchema, EVENT_TYPES, listDeliveriesQuerySchema, Messages, replayWebhookSchema, updateWebhookEndpointSchema } from '@logi/domain';
import { toJsonSchema } from '../ops/openapi/json-schema.js';
import { ref } from '../ops/openapi/openapi-components.js';
import { COUNTED, commonErrors, errorResponse, jsonResponse, validationResponse } from '../ops/openapi/openapi-responses.js';
import { queryParameters } from '../ops/openapi/query-parameters.js';
import type { GuideLinks } from '../ops/openapi/guides.js';
import { pathIdParameter } from '../ops/openapi/request.schemas.js';

/**
 * The OpenAPI side of webhook-endpoints.routes.ts (bodies and queries are the
 * domain's schemas that validate them), and the `webhooks` section: what the
 * service POSTs to those endpoints.
 */

export const webhooksTag = (guides: GuideLinks) => ({
  name: 'Webhooks',
  description: 'Endpoints that receive the same events as signed POSTs (Standard Webhooks), their attempts and replays.',
  externalDocs: guides.externalDocs('events-and-webhooks', 'Events and webhooks: signatures, a receiver, retries and replays.'),
});

const endpointId = pathIdParameter('endpoint_id', 'Webhook endpoint', 1);

const notFound = errorResponse(404, 'No such webhook endpoint for this client, or an id that is not a positive integer.', Messages.WEBHOOK_ENDPOINT_NOT_FOUND);
const invalid = (description: string, field: string, message: string, messageSchema: Record<string, unknown> = { const: Messages.INVALID_DATA }) =>
  validationResponse(description, messageSchema, { status: 422, message: Messages.INVALID_DATA, data: null, errors: { [field]: [message] } });
const jsonBody = (schema: Parameters<typeof toJsonSchema>[0], required = true) => ({
  required,
  content: { 'application/json': { schema: toJsonSchema(schema, 'input') } },
});
/** Spread after `commonErrors()`: its 400 takes the place of the shared one, and says both. */
export const bodyErrors = {
  '400': errorResponse(
    400,
    'A body sent as `application/json` that is not valid JSON, or that holds a `__proto__` key at any depth (refused as a guard against prototype pollution); a JSON value that is not an object is a 422 naming `body`. Or a request that is not well-formed HTTP (a control byte in a header value, say), refused before anything reads it, the connection closed after the answer.',
    Messages.BAD_REQUEST,
  ),
  '413': errorResponse(413, 'The body is over 64 KiB.', Messages.PAYLOAD_TOO_LARGE),
  '415': errorResponse(
    415,
    'A body whose `Content-Type` is not `application/json` (parameters such as `charset=utf-8` aside), or that has none.',
    'Unsupported Media Type',
  ),
};

/** The client's webhook endpoint calls (contract, "Events"). */
export function webhookEndpointPaths(guides: GuideLinks) {
  return {
    '/webhook-endpoints': {
      get: {
        operationId: 'listWebhookEndpoints',
        tags: ['Webhooks'],
        summary: 'List webhook endpoints',
        description: "This client's endpoints, oldest first, without their secrets.",
        responses: { '200': jsonResponse('Every endpoint of this client.', ref('WebhookEndpointListEnvelope'), COUNTED), ...commonErrors() },
      },
      post: {
        operationId: 'createWebhookEndpoint',
        tags: ['Webhooks'],
        summary: 'Create a webhook endpoint',
        description: [
          'Events of the chosen types (all when `event_types` is empty or absent) are POSTed to `url` as they are published, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the secret in the answer, shown only here and on rotation.',
          // What a target may be, in short; every refused address and spelling is in the guide.
          `\`url\` must reach a public host: one that is, or resolves to, a loopback, private or link-local address (cloud metadata included) is refused (422 on \`url\`), the address each delivery connects to is checked again, and redirects are not followed. An operator may allow \`http\` and such hosts for one client directory (on-premises receivers), or for every one. Every rule: ${guides.link('events-and-webhooks')}.`,
          'At most WEBHOOK_MAX_ENDPOINTS (10) endpoints per client directory.',
        ].join('\n\n'),
        requestBody: jsonBody(createWebhookEndpointSchema),
        responses: {
          '201': jsonResponse('The endpoint, with its secret.', ref('CreatedWebhookEndpointEnvelope'), [...COUNTED, 'Cache-Control (no-store)']),
          '422': invalid(
            'A field is invalid (`The given data was invalid.`, with `errors` naming `url`, `event_types` or `description`, or `body` when the body is not a JSON object); or the directory already has WEBHOOK_MAX_ENDPOINTS endpoints: `A client directory may have at most 10 webhook endpoints.` (its number is the setting), without `errors`.',
            'url',
            'The url must be an https URL.',
            { anyOf: [{ const: Messages.INVALID_DATA }, { type: 'string', pattern: '^A client directory may have at most [0-9]+ webhook endpoints\\.$' }] },
          ),
          ...commonErrors(),
          ...bodyErrors,
        },
      },
    },
    '/webhook-endpoints/{endpoint_id}': {
      get: {
        operationId: 'getWebhookEndpoint',
        tags: ['Webhooks'],
        summary: 'Read a webhook endpoint',
        description: 'One endpoint of the client, as the list shows it: its secret is shown only on creation and on rotation.',
        parameters: [endpointId],
        responses: { '200': jsonResponse('The endpoint, without its secret.', ref('WebhookEndpointEnvelope'), COUNTED), '404': notFound, ...commonErrors() },
      },
      patch: {
        operationId: 'updateWebhookEndpoint',
        tags: ['Webhooks'],
        summary: 'Change, pause or re-enable a webhook endpoint',
        description: `Any of \`url\`, \`event_types\`, \`description\`, \`enabled\`; fields not sent stay as they are (no body, or \`{}\`, changes nothing). \`enabled: true\` also clears \`disabled_reason\`. Events published while an endpoint is not enabled are not sent to it: replay them. A new \`url\` is checked as on creation.`,
        parameters: [endpointId],
        requestBody: jsonBody(updateWebhookEndpointSchema, false),
        responses: {
          '200': jsonResponse('The endpoint as it is now.', ref('WebhookEndpointEnvelope'), COUNTED),
          '404': notFound,
          '422': invalid(
            'A field is invalid: `errors` names it (`body` when the body is not a JSON object).',
            'enabled',
            'The enabled field must be true or false.',
          ),
          ...commonErrors(),
          ...bodyErrors,
        },
      },
      delete: {
        operationId: 'deleteWebhookEndpoint',
        tags: ['Webhooks'],
        summary: 'Delete a webhook endpoint',
        description: 'The endpoint and its attempts are removed; nothing more is sent to it.',
        parameters: [endpointId],
        responses: { '200': jsonResponse('Deleted; `data` is null.', ref('DeletedEnvelope'), COUNTED), '404': notFound, ...commonErrors() },
      },
    },
    '/webhook-endpoints/{endpoint_id}/rotate-secret': {
      post: {
        operationId: 'rotateWebhookSecret',
        tags: ['Webhooks'],
        summary: 'Rotate the signing secret',
        description:
          'A new secret signs from now on; for 24 hours the old one signs too (`webhook-signature` then holds two space-separated `v1,` entries), so receivers can switch without missing a delivery.',
        parameters: [endpointId],
        responses: {
          '200': jsonResponse('The new secret, shown this once.', ref('WebhookSecretEnvelope'), [...COUNTED, 'Cache-Control (no-store)']),
          '404': notFound,
          ...commonErrors(),
          ...bodyErrors,
        },
      },
    },
    '/webhook-endpoints/{endpoint_id}/deliveries': {
      get: {
        operationId: 'listWebhookDeliveries',
        tags: ['Webhooks'],
        summary: 'List delivery attempts',
        description: 'Every attempt to this endpoint, newest first: what was sent, what the endpoint answered, and when the next try is due.',
        parameters: [endpointId, ...queryParameters(listDeliveriesQuerySchema)],
        responses: {
          '200': jsonResponse('A page of attempts.', ref('WebhookDeliveryPageEnvelope'), COUNTED),
          '404': notFound,
          '422': invalid('`after` or `limit` invalid, or sent twice.', 'limit', 'The limit field must not be greater than 100.'),
          ...commonErrors(),
        },
      },
    },
    '/webhook-endpoints/{endpoint_id}/replay': {
      post: {
        operationId: 'replayWebhookEvents',
        tags: ['Webhooks'],
        summary: 'Send kept events again',
        description:
          'Schedules every kept event past `after` that the endpoint takes, to be sent again (each as a new first attempt); the answer says how many. When events past `after` were already removed by retention: 410, as in the feed. While an earlier replay of the endpoint is still being sent (an event it queued has not had its first attempt yet): 409; replays are not stacked.',
        parameters: [endpointId],
        requestBody: jsonBody(replayWebhookSchema),
        responses: {
          '202': jsonResponse('Scheduled.', ref('ReplayEnvelope'), COUNTED),
          '404': notFound,
          '409': errorResponse(
            409,
            'An earlier replay of this endpoint is still being sent: try again once its events have had their first attempts.',
            Messages.WEBHOOK_REPLAY_RUNNING,
          ),
          '410': errorResponse(410, 'Events past `after` were removed by retention, or `after` is from before a restore of the service.', [
            Messages.EVENTS_EXPIRED,
            Messages.EVENTS_CURSOR_RESTORED,
          ]),
          '422': invalid('`after` missing or invalid (`errors` names it; `body` when the body is not a JSON object).', 'after', 'The after field is required.'),
          ...commonErrors(),
          ...bodyErrors,
        },
      },
    },
  };
}

const EVENT_SCHEMA_NAMES: Record<(typeof EVENT_TYPES)[number], string> = {
  'invoice.created': 'InvoiceCreatedEvent',
  'invoice.updated': 'InvoiceUpdatedEvent',
  'invoice.deleted': 'InvoiceDeletedEvent',
  'order.file_attached': 'FileAttachedEvent',
  'export.succeeded': 'ExportSucceededEvent',
  'export.failed': 'ExportFailedEvent',
};

/** OpenAPI 3.1 `webhooks`: what the service POSTs to an endpoint, one entry per event type. */
export function webhooksSection(guides: GuideLinks) {
  const header = (description: string, schema: Record<string, unknown>) => ({ in: 'header', required: true, description, schema });
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace('.', '_')}`,
          tags: ['Webhooks'],
          summary: `The ${type} event, POSTed to an endpoint`,
          description: [
            "Verify the signature before trusting the body (the `standardwebhooks` package, or `@logi/client`'s `verifyWebhook`), and deduplicate by `webhook-id`: delivery is at least once and not ordered.",
            'Answer any 2xx within WEBHOOK_TIMEOUT_MS (10 s); anything else is tried again on WEBHOOK_RETRY_SCHEDULE, and an endpoint that only fails for WEBHOOK_DISABLE_AFTER_HOURS (120) is disabled.',
            `The schedule, a receiver, and what to do after an outage: ${guides.link('events-and-webhooks')}.`,
          ].join('\n\n'),
          parameters: [
            { name: 'webhook-id', ...header('The event id (the same on every retry).', { type: 'string', maxLength: 16, pattern: '^[0-9]{1,16}$' }) },
            {
              name: 'webhook-timestamp',
              ...header('Unix seconds of this attempt; refuse ones far from your clock (replays).', {
                type: 'string',
                maxLength: 16,
                pattern: '^[0-9]{1,16}$',
              }),
            },
            {
              name: 'webhook-signature',
              ...header(
                '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` keyed by the base64-decoded secret; two space-separated entries during a secret rotation.',
                // One entry of 47 characters per secret (HMAC-SHA256 is 44 in base64), two at most.
                { type: 'string', maxLength: 95, pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)?$' },
              ),
            },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: ref(EVENT_SCHEMA_NAMES[type]) } } },
          responses: { '200': { description: 'Any 2xx: received.' } },
        },
      },
    ]),
  );
}
