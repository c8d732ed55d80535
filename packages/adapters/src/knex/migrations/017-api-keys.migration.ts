import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * Several keys per client directory, each with scopes, an expiry, a revocation
 * and its last use (docs/contribute/decisions/0042-api-keys-with-scopes.md).
 * Every existing key moves here with all three scopes, so it keeps working.
 * Authentication looks a key up by (key_hash, directory): one unique index.
 * `clients.api_key_hash` is no longer read; it keeps its value for processes
 * of the previous release during a rolling restart, and is emptied when that
 * key is revoked.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (t) => {
    if (isMysql(knex)) {
      t.engine('InnoDB');
      t.charset('utf8mb4');
      t.collate('utf8mb4_unicode_ci');
    }
    t.increments('id');
    // Directories compare exactly (case-sensitive), as in clients.
    t.string('directory', 128).collate('utf8mb4_bin').notNullable().references('directory').inTable('clients');
    t.string('name', 100).notNullable();
    /** SHA-256 of the key, lower-case hex. */
    t.string('key_hash', 64).collate('utf8mb4_bin').notNullable();
    /** Comma-separated, in the order read,write,webhooks. */
    t.string('scopes', 64).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').nullable();
    t.bigInteger('last_used_at').nullable();
    t.bigInteger('revoked_at').nullable();
    t.unique(['key_hash', 'directory'], { indexName: 'api_keys_hash_directory_unique' });
    t.index(['directory', 'id'], 'api_keys_directory_index');
  });
  await knex.raw(
    `INSERT INTO api_keys (directory, name, key_hash, scopes, created_at)
     SELECT directory, 'default', api_key_hash, 'read,write,webhooks', created_at FROM clients WHERE api_key_hash <> ''`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('api_keys');
}
