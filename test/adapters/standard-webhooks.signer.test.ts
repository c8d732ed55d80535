import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { StandardWebhooksSigner } from '@logi/adapters';

/** The signer uses node:crypto; receivers verify with the Standard Webhooks package: both must agree byte for byte. */
describe('StandardWebhooksSigner', () => {
  const signer = new StandardWebhooksSigner();
  const body = JSON.stringify({ id: 7, type: 'invoice.updated', created: 1_800_000_000, data: { object: { id: 1, name: 'Łódź → Köln' } } });

  it('when one secret signs, then the signature is the one the standardwebhooks package makes, and it verifies', () => {
    const secret = signer.newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signer.sign('7', timestamp, body, [secret]);
    expect(signature).toBe(new Webhook(secret).sign('7', new Date(timestamp * 1000), body));
    expect(new Webhook(secret).verify(body, { 'webhook-id': '7', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature })).toEqual(
      JSON.parse(body),
    );
  });

  it('when two secrets sign (a rotation), then each receiver verifies with its own', () => {
    const [current, previous] = [signer.newSecret(), signer.newSecret()];
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signer.sign('8', timestamp, body, [current, previous]);
    expect(signature.split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(body, { 'webhook-id': '8', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature })).toEqual(
        JSON.parse(body),
      );
    }
    expect(() =>
      new Webhook(signer.newSecret()).verify(body, { 'webhook-id': '8', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature }),
    ).toThrow();
  });
});
