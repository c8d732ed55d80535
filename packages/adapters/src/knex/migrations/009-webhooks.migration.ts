import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * Webhook endpoints and their delivery attempts (contract, "Events"). The
 * attempts table is also the delivery queue: a pending row is due at
 * `next_attempt_at` and taken by one process at a time for a lease (its
 * `next_attempt_at` moves to the lease's end), so a killed process's attempt
 * is taken again, and nothing of it lives only in Redis.
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  const table = mysql ? 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci' : '';
  const directory = mysql ? 'VARCHAR(128) COLLATE utf8mb4_bin NOT NULL' : 'VARCHAR(128) NOT NULL';
  const secret = mysql ? 'VARCHAR(100) COLLATE utf8mb4_bin' : 'VARCHAR(100)';
  await knex.raw(
    `CREATE TABLE webhook_endpoints (
      id ${mysql ? 'INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
      directory ${directory},
      url ${mysql ? 'VARCHAR(2048) COLLATE utf8mb4_bin' : 'VARCHAR(2048)'} NOT NULL,
      event_types TEXT NOT NULL,
      description VARCHAR(255) NULL,
      enabled ${mysql ? 'TINYINT' : 'INTEGER'} NOT NULL,
      disabled_reason VARCHAR(255) NULL,
      secret ${secret} NOT NULL,
      previous_secret ${secret} NULL,
      previous_secret_until BIGINT NULL,
      failing_since BIGINT NULL,
      created BIGINT NOT NULL
    ) ${table}`,
  );
  await knex.raw('CREATE INDEX webhook_endpoints_directory_index ON webhook_endpoints (directory, id)');
  await knex.raw(
    `CREATE TABLE webhook_deliveries (
      id ${mysql ? 'BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
      endpoint_id ${mysql ? 'INT UNSIGNED' : 'INTEGER'} NOT NULL,
      event_id ${mysql ? 'BIGINT UNSIGNED' : 'INTEGER'} NOT NULL,
      event_type VARCHAR(32) NOT NULL,
      attempt INTEGER NOT NULL,
      status VARCHAR(16) NOT NULL,
      response_status INTEGER NULL,
      error VARCHAR(500) NULL,
      created BIGINT NOT NULL,
      next_attempt_at BIGINT NULL
    ) ${table}`,
  );
  await knex.raw('CREATE INDEX webhook_deliveries_due_index ON webhook_deliveries (status, next_attempt_at)');
  await knex.raw('CREATE INDEX webhook_deliveries_endpoint_index ON webhook_deliveries (endpoint_id, id)');
}

export async function down(knex: Knex): Promise<void> {
  for (const name of ['webhook_deliveries', 'webhook_endpoints']) await knex.schema.dropTableIfExists(name);
}
