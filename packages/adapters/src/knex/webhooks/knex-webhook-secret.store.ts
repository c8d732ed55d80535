import type { Knex } from 'knex';
import type { StoredWebhookSecrets, WebhookSecretStorePort } from '@logi/domain';

/** The stored form names its key: `v1:<key id>:...` (crypto/aes-gcm-secret.cipher.ts). */
const SEALED = /^v1:([^:]+):/;

export class KnexWebhookSecretStore implements WebhookSecretStorePort {
  constructor(private readonly knex: Knex) {}

  async keyIdsInUse(): Promise<string[]> {
    const rows = (await this.knex('webhook_endpoints')
      .select('secret', 'previous_secret')
      .where('secret', 'like', 'v1:%')
      .orWhere('previous_secret', 'like', 'v1:%')) as Array<{ secret: unknown; previous_secret: unknown }>;
    const ids = new Set<string>();
    for (const row of rows) {
      for (const value of [row.secret, row.previous_secret]) {
        const id = value == null ? undefined : SEALED.exec(String(value))?.[1];
        if (id !== undefined) ids.add(id);
      }
    }
    return [...ids].sort();
  }

  async page(afterId: number, limit: number): Promise<StoredWebhookSecrets[]> {
    const rows = (await this.knex('webhook_endpoints').select('id', 'secret', 'previous_secret').where('id', '>', afterId).orderBy('id').limit(limit)) as Array<
      Record<string, unknown>
    >;
    return rows.map((row) => ({
      endpointId: Number(row.id),
      secret: String(row.secret),
      previousSecret: row.previous_secret == null ? null : String(row.previous_secret),
    }));
  }

  async replace(expected: StoredWebhookSecrets, next: StoredWebhookSecrets): Promise<boolean> {
    const query = this.knex('webhook_endpoints').where({ id: expected.endpointId, secret: expected.secret });
    if (expected.previousSecret === null) query.whereNull('previous_secret');
    else query.andWhere('previous_secret', expected.previousSecret);
    return (await query.update({ secret: next.secret, previous_secret: next.previousSecret })) > 0;
  }
}
