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

  async sealedWith(keyId: string): Promise<string | null> {
    const prefix = `v1:${keyId}:`;
    // substr, not LIKE: a key id may hold "_", which LIKE reads as a wildcard. MariaDB compares without case, so the
    // rows found are checked here too (ids "k1" and "K1" are two keys).
    const rows = (await this.knex('webhook_endpoints')
      .select('secret', 'previous_secret')
      .whereRaw('substr(secret, 1, ?) = ?', [prefix.length, prefix])
      .orWhereRaw('substr(previous_secret, 1, ?) = ?', [prefix.length, prefix])
      .orderBy('id')
      .limit(20)) as Array<{ secret: unknown; previous_secret: unknown }>;
    for (const row of rows) {
      for (const value of [row.secret, row.previous_secret]) if (typeof value === 'string' && value.startsWith(prefix)) return value;
    }
    return null;
  }

  async page(afterId: number, limit: number, only?: 'plain'): Promise<StoredWebhookSecrets[]> {
    const query = this.knex('webhook_endpoints').select('id', 'secret', 'previous_secret').where('id', '>', afterId).orderBy('id').limit(limit);
    if (only === 'plain') {
      // A plain secret is any value that is not in the sealed form (`v1:<key id>:...`).
      query.andWhereRaw("(secret not like 'v1:%' or (previous_secret is not null and previous_secret not like 'v1:%'))");
    }
    const rows = (await query) as Array<Record<string, unknown>>;
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
