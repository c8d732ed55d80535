import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { WebhookSignerPort } from '@logi/domain';

/** Secret bytes: 24, as the Standard Webhooks reference implementations make them. */
const SECRET_BYTES = 24;

/** Signs with the `standardwebhooks` package (the same code receivers verify with), one `v1,` entry per secret. */
export class StandardWebhooksSigner implements WebhookSignerPort {
  sign(messageId: string, timestampSeconds: number, body: string, secrets: readonly string[]): string {
    const at = new Date(timestampSeconds * 1000);
    return secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' ');
  }

  newSecret(): string {
    return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
  }
}
