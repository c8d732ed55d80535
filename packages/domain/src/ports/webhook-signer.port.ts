/** Standard Webhooks signatures. */
export interface WebhookSignerPort {
  /** The `webhook-signature` value: `v1,<base64>` per secret, space-separated. */
  sign(messageId: string, timestampSeconds: number, body: string, secrets: readonly string[]): string;
  /** A new secret: `whsec_` and base64 of random bytes. */
  newSecret(): string;
}
