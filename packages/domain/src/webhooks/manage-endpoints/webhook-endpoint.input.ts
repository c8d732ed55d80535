import { z } from 'zod';
import { ValidationError } from '../../shared/common.errors.js';
import { Messages } from '../../shared/messages.js';
import { readSingleValues } from '../../shared/query-params.js';
import { integerField } from '../../shared/query-fields.js';
import { fieldErrorsFromZod } from '../../shared/zod-errors.js';
import { EVENT_TYPES, type EventType } from '../../events/event.js';
import { WebhookUrlMessages } from '../webhook-target.rules.js';

export const WEBHOOK_URL_MAX = 2048;
export const WEBHOOK_DESCRIPTION_MAX = 255;

const url = z
  .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'The url field is required.' : 'The url field must be a string.') })
  .min(1, { error: 'The url field is required.' })
  // The target rules (webhook-target.rules.ts) refuse a longer one with the same message; stated here for the document.
  .max(WEBHOOK_URL_MAX, { error: WebhookUrlMessages.TOO_LONG });
const eventTypes = z
  .array(z.enum(EVENT_TYPES, { error: 'The selected event_types is invalid.' }), { error: 'The event_types field must be an array of event types.' })
  .transform((types) => [...new Set(types)])
  // Any number of them (repeats count once): only the 64 KiB body bounds the list, which the document says (`x-bounded-by`).
  .meta({
    description: 'Event types to send; empty or absent: every type.',
    'x-bounded-by': 'No item limit of its own: the 64 KiB JSON body bounds it (413); repeated types count once.',
  });
const description = z
  .string({ error: 'The description field must be a string.' })
  .max(WEBHOOK_DESCRIPTION_MAX, { error: `The description field must not be greater than ${WEBHOOK_DESCRIPTION_MAX} characters.` })
  .nullable();

/** The bodies of the endpoint calls; one schema for validation and the OpenAPI document. */
export const createWebhookEndpointSchema = z.object({
  url: url.meta({ description: 'Where events are POSTed: an absolute https URL (at most 2048 characters, no user info) of a public host.' }),
  event_types: eventTypes.optional(),
  description: description.optional().meta({ description: "Free text for the client's own use." }),
});

export const updateWebhookEndpointSchema = z.object({
  url: url.optional().meta({ description: 'A new target, checked as on creation.' }),
  event_types: eventTypes.optional(),
  description: description.optional(),
  enabled: z.boolean({ error: 'The enabled field must be true or false.' }).optional().meta({
    description: '`true` re-enables an endpoint (clearing `disabled_reason`); `false` pauses it: events published meanwhile are not sent to it (replay them).',
  }),
});

export const replayWebhookSchema = z.object({
  after: z
    .int({ error: (issue) => (issue.input === undefined ? 'The after field is required.' : 'The after field must be an integer.') })
    .min(0, { error: 'The after field must be at least 0.' })
    .max(Number.MAX_SAFE_INTEGER, { error: `The after field must not be greater than ${Number.MAX_SAFE_INTEGER}.` })
    .meta({ description: 'Send again every kept event past this event id (one the endpoint takes).' }),
});

export const listDeliveriesQuerySchema = z.object({
  after: integerField('after', 1)
    .optional()
    .meta({ description: 'The `next_after` of the previous page: attempts older than this one. Absent: from the newest.' }),
  limit: integerField('limit', 1, 100).optional().meta({ description: 'Attempts per page.', default: 20 }),
});

export interface CreateWebhookEndpointInput {
  url: string;
  eventTypes: EventType[];
  description: string | null;
}

export interface UpdateWebhookEndpointInput {
  url?: string;
  eventTypes?: EventType[];
  description?: string | null;
  enabled?: boolean;
}

function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw ValidationError.invalidData({ body: ['The body must be a JSON object.'] });
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw ValidationError.invalidData(fieldErrorsFromZod(parsed.error));
  return parsed.data;
}

export function parseCreateWebhookEndpoint(body: unknown): CreateWebhookEndpointInput {
  const data = parseBody(createWebhookEndpointSchema, body);
  return { url: data.url, eventTypes: data.event_types ?? [], description: data.description ?? null };
}

export function parseUpdateWebhookEndpoint(body: unknown): UpdateWebhookEndpointInput {
  const data = parseBody(updateWebhookEndpointSchema, body);
  return {
    ...(data.url === undefined ? {} : { url: data.url }),
    ...(data.event_types === undefined ? {} : { eventTypes: data.event_types }),
    ...(data.description === undefined ? {} : { description: data.description }),
    ...(data.enabled === undefined ? {} : { enabled: data.enabled }),
  };
}

export function parseReplayWebhook(body: unknown): { after: number } {
  return parseBody(replayWebhookSchema, body);
}

export function parseListDeliveriesQuery(pairs: Iterable<[string, string]>): { before: number | null; limit: number } {
  const { values, errors } = readSingleValues(pairs, Object.keys(listDeliveriesQuerySchema.shape));
  const parsed = listDeliveriesQuerySchema.safeParse(values);
  const allErrors = { ...(parsed.success ? {} : fieldErrorsFromZod(parsed.error)), ...errors };
  if (!parsed.success || Object.keys(allErrors).length > 0) throw new ValidationError(Messages.INVALID_DATA, allErrors);
  return { before: parsed.data.after ?? null, limit: parsed.data.limit ?? 20 };
}
