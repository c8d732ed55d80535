import { createHmac, randomBytes } from 'node:crypto';
import type { WebhookSignerPort } from '@logi/domain';

/** Secret bytes: 24, as the Standard Webhooks reference implementations make them. */
const SECRET_BYTES = 24;
const SECRET_PREFIX = 'whsec_';

/**
 * Signs as Standard Webhooks specifies, one `v1,` entry per secret: base64 of the HMAC-SHA256 of
 * `<id>.<timestamp>.<body>` under the secret's bytes (base64 after `whsec_`). With node:crypto's native HMAC rather
 * than the `standardwebhooks` package's JavaScript SHA-256, about a twentieth of a delivery's CPU (issue 26); the
 * tests verify every signature with that package, as receivers do.
 */
export class StandardWebhooksSigner implements WebhookSignerPort {
  sign(messageId: string, timestampSeconds: number, body: string, secrets: readonly string[]): string {
    const content = `${messageId}.${timestampSeconds}.${body}`;
    return secrets.map((secret) => `v1,${createHmac('sha256', secretBytes(secret)).update(content).digest('base64')}`).join(' ');
  }

  newSecret(): string {
    return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
  }
}

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}
