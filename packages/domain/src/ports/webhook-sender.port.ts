/** One signed POST to a client's webhook endpoint. */
export interface WebhookRequest {
  url: string;
  /** The Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) and the content type. */
  headers: Record<string, string>;
  body: string;
  /** The whole attempt (connect, send, first bytes of the answer) ends by then. */
  timeoutMs: number;
  /** Allow loopback, private, link-local and other non-public targets (WEBHOOK_ALLOW_PRIVATE_TARGETS, or the endpoint's directory is allowed them). */
  allowPrivateTargets: boolean;
}

/**
 * Why an attempt got no answer, as the client is told: coarse on purpose, so that a delivery's error never says which
 * address was connected to or which ports of a network answer (the operator's detail is `error`).
 */
export type WebhookFailureReason =
  | 'refused: private address'
  | 'refused: not an https URL'
  | 'refused: invalid URL'
  | 'host not found'
  | 'connection failed'
  | 'timed out'
  | 'TLS error'
  | 'invalid answer'
  | 'not sent';

/** What came of one attempt: an HTTP answer (any status), or no answer and why. */
export type WebhookAttemptResult =
  | { kind: 'answered'; status: number }
  | {
      kind: 'failed';
      /** A short, readable reason for the operator (`timed out after 10000 ms`, `address 10.0.0.1 is not public`, ...); never a stack. */
      error: string;
      /** The coarse reason the client sees. */
      reason: WebhookFailureReason;
      /** The target was refused before any byte was sent (a forbidden address after resolution, say). */
      refused: boolean;
    };

/**
 * Sends webhook requests. The address actually connected to is checked
 * against the SSRF rules (not only the name at registration), redirects are
 * not followed, and only a bounded part of the answer is read.
 */
export interface WebhookSenderPort {
  send(request: WebhookRequest): Promise<WebhookAttemptResult>;
}
