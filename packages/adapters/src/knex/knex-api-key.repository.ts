import type { Knex } from 'knex';
import type { ApiKey, ApiKeyRepositoryPort, ApiKeyScope, Client, StoredApiKey } from '@logi/domain';
import { API_KEY_COLUMNS, scopesColumn, toApiKey, toStoredApiKey, type ApiKeyRow } from './mappers/api-key-row.mapper.js';
import { CLIENT_COLUMNS, toClient, type ClientRow } from './mappers/client-row.mapper.js';
import { toText } from './mappers/sql-values.js';

/** The key's columns as `key_<name>` beside the client's own in the authentication join. */
const JOINED_KEY_COLUMNS = API_KEY_COLUMNS.map((column) => `k.${column} as key_${column}`);
const JOINED_CLIENT_COLUMNS = CLIENT_COLUMNS.map((column) => `c.${column}`);

export class KnexApiKeyRepository implements ApiKeyRepositoryPort {
  constructor(private readonly knex: Knex) {}

  async findForAuthentication(directory: string, keyHash: string): Promise<{ key: StoredApiKey; client: Client } | null> {
    // One dive into api_keys_hash_directory_unique, one into clients_directory_unique.
    const row = (await this.knex('api_keys as k')
      .join('clients as c', 'c.directory', 'k.directory')
      .select([...JOINED_KEY_COLUMNS, ...JOINED_CLIENT_COLUMNS])
      .where({ 'k.key_hash': keyHash, 'k.directory': directory })
      .first()) as (ClientRow & Record<string, unknown>) | undefined;
    if (!row) return null;
    const keyRow = Object.fromEntries(API_KEY_COLUMNS.map((column) => [column, row[`key_${column}`]])) as ApiKeyRow;
    return { key: toStoredApiKey(keyRow), client: toClient(row) };
  }

  async create(key: { directory: string; name: string; keyHash: string; scopes: ApiKeyScope[]; created: number; expires: number | null }): Promise<ApiKey> {
    const [id] = await this.knex('api_keys').insert({
      directory: key.directory,
      name: key.name,
      key_hash: key.keyHash,
      scopes: scopesColumn(key.scopes),
      created_at: key.created,
      expires_at: key.expires,
    });
    const stored = await this.findById(key.directory, Number(id));
    if (!stored) throw new Error(`API key ${id} was not stored`);
    return stored;
  }

  async list(directory: string): Promise<ApiKey[]> {
    const rows = (await this.knex('api_keys').select(API_KEY_COLUMNS).where({ directory }).orderBy('id')) as ApiKeyRow[];
    return rows.map(toApiKey);
  }

  async revoke(directory: string, id: number, at: number): Promise<{ key: ApiKey; revokedNow: boolean } | null> {
    return this.knex.transaction(async (trx) => {
      const row = (await trx('api_keys').select(API_KEY_COLUMNS).where({ directory, id }).forUpdate().first()) as ApiKeyRow | undefined;
      if (!row) return null;
      if (row.revoked_at != null) return { key: toApiKey(row), revokedNow: false };
      await trx('api_keys').where({ id }).update({ revoked_at: at });
      await forgetLegacyHash(trx, directory, [toText(row.key_hash, 'api_keys.key_hash')]);
      return { key: toApiKey({ ...row, revoked_at: at }), revokedNow: true };
    });
  }

  async revokeAll(directory: string, at: number): Promise<number> {
    return this.knex.transaction(async (trx) => {
      const rows = (await trx('api_keys').select('key_hash').where({ directory }).whereNull('revoked_at').forUpdate()) as Array<{ key_hash: string }>;
      if (rows.length === 0) return 0;
      await trx('api_keys').where({ directory }).whereNull('revoked_at').update({ revoked_at: at });
      await forgetLegacyHash(
        trx,
        directory,
        rows.map((r) => r.key_hash),
      );
      return rows.length;
    });
  }

  async recordUse(id: number, at: number): Promise<void> {
    // Never moves back (two processes may record the same minute).
    await this.knex('api_keys')
      .where({ id })
      .andWhere((q) => {
        void q.whereNull('last_used_at').orWhere('last_used_at', '<', at);
      })
      .update({ last_used_at: at });
  }

  async findById(directory: string, id: number): Promise<ApiKey | null> {
    const row = (await this.knex('api_keys').select(API_KEY_COLUMNS).where({ directory, id }).first()) as ApiKeyRow | undefined;
    return row ? toApiKey(row) : null;
  }
}

/**
 * `clients.api_key_hash` (read by the previous release only) keeps a migrated
 * key's hash; once that key is revoked, the old column must not accept it either.
 */
async function forgetLegacyHash(trx: Knex.Transaction, directory: string, hashes: string[]): Promise<void> {
  await trx('clients').where({ directory }).whereIn('api_key_hash', hashes).update({ api_key_hash: '' });
}
