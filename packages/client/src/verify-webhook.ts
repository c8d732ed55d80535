import { Webhook, WebhookVerificationError as SignatureMismatch } from 'standardwebhooks';
import type { Event } from './schema.types.js';
import { WebhookVerificationError } from './webhook-verification.errors.js';

/** The request's headers as `fetch` (`Headers`) or `node:http` (`req.headers`) give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const SIGNED_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/**
 * The event a webhook request carries, once the `standardwebhooks` package
 * has checked it per Standard Webhooks: the HMAC of
 * `<webhook-id>.<webhook-timestamp>.<body>` under `secret` (`whsec_...`)
 * matches one of the `v1,` entries of `webhook-signature` (during a rotation
 * the service sends one per secret, so the old and the new secret both
 * verify), and `webhook-timestamp` is within 5 minutes of now.
 *
 * Pass the body exactly as received (the raw bytes or their UTF-8 text, not
 * re-serialised JSON). Throws a `WebhookVerificationError` for a request
 * that does not verify; an empty or malformed `secret` is a configuration
 * error and throws a plain Error. Deliveries are at least once: deduplicate
 * by `webhook-id` (the event's `id`).
 */
export function verifyWebhook(payload: string | Buffer, headers: WebhookHeaders, secret: string): Event {
  const webhook = new Webhook(secret);
  let event: unknown;
  try {
    event = webhook.verify(payload, signedHeaders(headers));
  } catch (error) {
    if (error instanceof SignatureMismatch) throw new WebhookVerificationError(error.message, { cause: error });
    // The signature matched but the body is not JSON: nothing the service sends.
    if (error instanceof SyntaxError) throw new WebhookVerificationError('The signed payload is not JSON', { cause: error });
    throw error;
  }
  if (!isEvent(event)) throw new WebhookVerificationError('The signed payload is not an event');
  return event;
}

function signedHeaders(headers: WebhookHeaders): Record<string, string> {
  const signed: Record<string, string> = {};
  for (const name of SIGNED_HEADERS) signed[name] = headerValue(headers, name);
  return signed;
}

/** One header's value ('' when absent); repeated lines are joined as the signature list is (space-separated). */
function headerValue(headers: WebhookHeaders, name: string): string {
  if (headers instanceof Headers) return headers.get(name) ?? '';
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value.join(' ') : (value ?? '');
}

function isEvent(value: unknown): value is Event {
  if (typeof value !== 'object' || value === null) return false;
  const event = value as Record<string, unknown>;
  return Number.isInteger(event.id) && typeof event.type === 'string' && typeof event.data === 'object' && event.data !== null;
}
