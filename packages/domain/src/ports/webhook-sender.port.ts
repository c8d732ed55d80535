/** One signed POST to a client's webhook endpoint. */
export interface WebhookRequest {
  url: string;
  /** The Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) and the content type. */
  headers: Record<string, string>;
  body: string;
  /** The whole attempt (connect, send, first bytes of the answer) ends by then. */
  timeoutMs: number;
  /** Allow loopback, private, link-local and other non-public targets (WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  allowPrivateTargets: boolean;
}

/** What came of one attempt: an HTTP answer (any status), or no answer and why. */
export type WebhookAttemptResult =
  | { kind: 'answered'; status: number }
  | {
      kind: 'failed';
      /** A short, readable reason for the operator and the client (`timed out after 10000 ms`, `connection reset`, ...); never a stack. */
      error: string;
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
