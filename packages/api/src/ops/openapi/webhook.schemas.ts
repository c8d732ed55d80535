import { z } from 'zod';
import { EVENT_TYPES, DELIVERY_STATUSES } from '@logi/domain';
import type { toCreatedWebhookEndpointDto, toWebhookDeliveriesDto, toWebhookEndpointDto } from '../../mappers/webhook.mapper.js';

export const webhookEndpointSchema = z
  .strictObject({
    id: z.int().describe('Webhook endpoint ID.'),
    url: z.string().describe('Where events are POSTed.'),
    event_types: z.array(z.enum(EVENT_TYPES)).describe('The event types sent to it; empty: every type.'),
    description: z.string().nullable(),
    enabled: z.boolean().describe('false: nothing is sent (paused by the client, or disabled after WEBHOOK_DISABLE_AFTER_HOURS of failures).'),
    disabled_reason: z.string().nullable().describe('Why the service disabled it; null when enabled or paused by the client.'),
    created: z.int().nonnegative().describe('Unix seconds, UTC.'),
  })
  .describe('A webhook endpoint (its secret is shown only on creation and rotation).');

const secret = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/)
  .describe('The signing secret (`whsec_` + base64): keep it; it is not shown again.');

export const createdWebhookEndpointSchema = webhookEndpointSchema.extend({ secret }).describe('The new endpoint, with its secret shown this once.');

export const webhookSecretSchema = z.strictObject({ secret }).describe('The new secret; the old one also signs for 24 hours.');

export const webhookDeliverySchema = z
  .strictObject({
    id: z.int().describe('Attempt ID.'),
    event_id: z.int(),
    event_type: z.enum(EVENT_TYPES),
    attempt: z.int().min(1).describe('1 for the first try, one more per retry.'),
    status: z.enum(DELIVERY_STATUSES).describe('`pending` (due or in flight), `succeeded` (a 2xx), `failed` (anything else; a later attempt may follow).'),
    response_status: z.int().nullable().describe("The endpoint's HTTP status; null when it gave none (timeout, reset, refused)."),
    error: z
      .string()
      .nullable()
      .describe(
        'What went wrong, coarse on purpose (never an address or port): `answered <status>`, `timed out`, `connection failed`, `host not found`, `TLS error`, `invalid answer`, `refused: private address`, `refused: not an https URL`, or a sentence about retention or a disabled endpoint; null on success.',
      ),
    created: z.int().nonnegative().describe('When the attempt was scheduled, Unix seconds, UTC.'),
    next_attempt_at: z.int().nonnegative().nullable().describe('Pending: when it is due; failed: when the retry is due (null after the last one).'),
  })
  .describe('One attempt to deliver one event.');

export const webhookDeliveryPageSchema = z
  .strictObject({
    deliveries: z.array(webhookDeliverySchema).describe('Newest first.'),
    has_more: z.boolean(),
    next_after: z.int().nullable().describe('The `after` of the next (older) page; null when this page is empty and none was sent.'),
  })
  .describe('A page of delivery attempts.');

export const replayResultSchema = z.strictObject({ scheduled: z.int().nonnegative().describe('Events scheduled to be sent again.') });

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const mirrors: [
  Equals<z.output<typeof webhookEndpointSchema>, ReturnType<typeof toWebhookEndpointDto>>,
  Equals<z.output<typeof createdWebhookEndpointSchema>, ReturnType<typeof toCreatedWebhookEndpointDto>>,
  Equals<z.output<typeof webhookDeliveryPageSchema>, ReturnType<typeof toWebhookDeliveriesDto>>,
] = [true, true, true];
void mirrors;
