import { z } from 'zod';
import { API_KEY_SCOPES } from '@logi/domain';
import { withoutSafeIntegerBounds, type JsonSchema } from './json-schema.js';
import {
  attachFilesSchema,
  failedUploadSchema,
  fieldErrorsSchema,
  fileCategorySchema,
  invoiceListSchema,
  invoiceOrderSchema,
  invoiceSchema,
  fileLinkSchema,
  orderFileSchema,
  orderLookupSchema,
  paginationSchema,
  uploadedFileSchema,
} from './response.schemas.js';
import {
  createdWebhookEndpointSchema,
  replayResultSchema,
  webhookDeliveryPageSchema,
  webhookDeliverySchema,
  webhookEndpointSchema,
  webhookSecretSchema,
} from './webhook.schemas.js';
import {
  eventPageSchema,
  eventSchema,
  fileAttachedEventSchema,
  invoiceCreatedEventSchema,
  invoiceDeletedEventSchema,
  invoiceUpdatedEventSchema,
  exportSucceededEventSchema,
  exportFailedEventSchema,
} from './event.schemas.js';
import { exportSchema } from './export.schemas.js';

const envelope = <S extends number | null, D extends z.ZodType>(status: S, data: D, description: string) =>
  z
    .strictObject({
      status: (status === null ? z.int().min(400).max(599) : z.literal(status)).describe('Equals the HTTP status.'),
      message: z.string(),
      data,
    })
    .describe(description);

const errorEnvelope = envelope(null, z.null(), 'An error: `message` says what went wrong, `data` is null.');
const validationErrorEnvelope = z
  .strictObject({
    status: z.literal(422),
    message: z.string().describe('The first problem, or `The given data was invalid.` for query validation.'),
    data: z.null(),
    errors: fieldErrorsSchema.optional(),
  })
  .describe('Validation failed: `errors` names each field and what is wrong with it.');
const noFilesUploadedEnvelope = envelope(422, attachFilesSchema, 'No file could be stored: `data.failed` says why for each file.');

/** Every schema with a name of its own, in the order the document lists them. */
const NAMED_SCHEMAS: Record<string, z.ZodType> = {
  Invoice: invoiceSchema,
  InvoiceOrder: invoiceOrderSchema,
  Pagination: paginationSchema,
  InvoiceList: invoiceListSchema,
  OrderLookup: orderLookupSchema,
  FileCategory: fileCategorySchema,
  UploadedFile: uploadedFileSchema,
  FailedUpload: failedUploadSchema,
  AttachFilesPayload: attachFilesSchema,
  OrderFile: orderFileSchema,
  FileLink: fileLinkSchema,
  FieldErrors: fieldErrorsSchema,
  InvoiceCreatedEvent: invoiceCreatedEventSchema,
  InvoiceUpdatedEvent: invoiceUpdatedEventSchema,
  InvoiceDeletedEvent: invoiceDeletedEventSchema,
  FileAttachedEvent: fileAttachedEventSchema,
  ExportSucceededEvent: exportSucceededEventSchema,
  ExportFailedEvent: exportFailedEventSchema,
  Event: eventSchema,
  EventPage: eventPageSchema,
  EventPageEnvelope: envelope(200, eventPageSchema, 'A page of the change feed.'),
  WebhookEndpoint: webhookEndpointSchema,
  CreatedWebhookEndpoint: createdWebhookEndpointSchema,
  WebhookDelivery: webhookDeliverySchema,
  WebhookDeliveryPage: webhookDeliveryPageSchema,
  WebhookEndpointEnvelope: envelope(200, webhookEndpointSchema, 'A webhook endpoint.'),
  WebhookEndpointListEnvelope: envelope(200, z.array(webhookEndpointSchema), 'Every webhook endpoint of the client.'),
  CreatedWebhookEndpointEnvelope: envelope(201, createdWebhookEndpointSchema, 'The new endpoint and its secret.'),
  WebhookSecretEnvelope: envelope(200, webhookSecretSchema, 'The new secret.'),
  WebhookDeliveryPageEnvelope: envelope(200, webhookDeliveryPageSchema, 'A page of delivery attempts.'),
  ReplayEnvelope: envelope(202, replayResultSchema, 'The replay was scheduled.'),
  DeletedEnvelope: envelope(200, z.null(), 'Deleted: `data` is null.'),
  Export: exportSchema,
  ExportEnvelope: envelope(200, exportSchema, 'An export.'),
  ExportAcceptedEnvelope: envelope(202, exportSchema, 'The export, queued.'),
  ExportListEnvelope: envelope(200, z.array(exportSchema), 'The newest exports of the client (at most 100), newest first.'),
  InvoiceListEnvelope: envelope(200, invoiceListSchema, 'A page of invoices.'),
  OrderLookupEnvelope: envelope(200, orderLookupSchema, 'The order found.'),
  FileCategoriesEnvelope: envelope(200, z.array(fileCategorySchema), 'Every file category.'),
  AttachFilesEnvelope: envelope(201, attachFilesSchema, 'At least one file was stored; the others are in `failed`.'),
  OrderFileListEnvelope: envelope(200, z.array(orderFileSchema), "The order's files, oldest first."),
  FileLinkEnvelope: envelope(201, fileLinkSchema, 'The new link.'),
  ErrorEnvelope: errorEnvelope,
  ValidationErrorEnvelope: validationErrorEnvelope,
  NoFilesUploadedEnvelope: noFilesUploadedEnvelope,
};

/** The named schemas as JSON Schema, referring to each other through `#/components/schemas/...`. */
export function componentSchemas(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(NAMED_SCHEMAS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'output',
    uri: (id) => `#/components/schemas/${id}`,
    // A literal status (200, 422) is an integer, which zod's JSON Schema calls a number.
    override: ({ jsonSchema }) => {
      if (jsonSchema.type === 'number' && Number.isInteger(jsonSchema.const)) jsonSchema.type = 'integer';
    },
  }) as {
    schemas: Record<string, JsonSchema>;
  };
  return Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, withoutSafeIntegerBounds(schema) as JsonSchema]));
}

export const ref = (name: keyof typeof NAMED_SCHEMAS) => ({ $ref: `#/components/schemas/${name}` });

/** The scheme's description: what a key is, and what its scopes allow (contract "API keys with scopes"). */
const BEARER_DESCRIPTION = [
  "The client's API key: `Authorization: Bearer <API_KEY>` (the word `Bearer` in any case). A directory may hold several keys, each with its own scopes, expiry and revocation.",
  `Scopes (${API_KEY_SCOPES.map((scope) => `\`${scope}\``).join(', ')}): \`webhooks\` for every call under \`/webhook-endpoints\`, reads included; \`write\` for the calls that store or change data (uploads, exports made or deleted); \`read\` for whatever hands data out: every other \`GET\` and \`HEAD\`, file links, and creating, changing or replaying a webhook endpoint (which need \`webhooks\` and \`read\`). Each operation names the scopes it needs in \`x-required-scopes\`; a key without one is answered 403 \`This API key lacks the <scope> scope.\`, naming the first missing one in the order read, write, webhooks (after 401, before 404 and 422).`,
].join('\n\n');

export const securitySchemes = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: BEARER_DESCRIPTION,
  },
  clientDirectory: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Client-Directory',
    description: 'The client directory the key belongs to (exact, case-sensitive). Needed together with the bearer key.',
  },
  legacyDirectory: {
    type: 'apiKey',
    in: 'header',
    name: 'directory',
    description: 'Legacy name of `X-Client-Directory`, still accepted; when both are sent, `X-Client-Directory` wins.',
  },
};
