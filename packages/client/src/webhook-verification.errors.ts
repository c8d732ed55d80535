/**
 * A webhook request that must not be trusted: a signature that matches none
 * of the secret's (a tampered body, another secret), a timestamp more than
 * 5 minutes off (a replayed request), a missing `webhook-*` header, or a
 * signed body that is not an event. Answer it with a 4xx and do not act on it.
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}
