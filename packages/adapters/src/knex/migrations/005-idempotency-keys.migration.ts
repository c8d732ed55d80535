import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * Idempotency-Key records of the embedded profile (and of MariaDB without
 * Redis): one row per directory and key, holding the request's fingerprint
 * digest and, while the first request runs, its lock token; once it has
 * answered, the answer. `expires_at` (Unix ms) is when the lock or the kept
 * answer runs out; the housekeeping removes rows past it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    if (isMysql(knex)) {
      t.engine('InnoDB');
      t.charset('utf8mb4');
      t.collate('utf8mb4_unicode_ci');
    }
    // Keys compare exactly (case-sensitive), as the directory does.
    t.string('directory', 128).collate('utf8mb4_bin').notNullable();
    t.string('idempotency_key', 255).collate('utf8mb4_bin').notNullable();
    t.string('fingerprint', 64).notNullable();
    t.string('lock_token', 64).nullable();
    t.text('answer', 'mediumtext').nullable();
    t.bigInteger('expires_at').notNullable();
    t.primary(['directory', 'idempotency_key'], 'idempotency_keys_primary');
    t.index(['expires_at'], 'idempotency_keys_expires_at_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('idempotency_keys');
}
