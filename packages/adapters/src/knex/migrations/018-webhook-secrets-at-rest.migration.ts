import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * Webhook secrets sealed at rest and private targets per directory (docs/contribute/decisions/0043-webhook-secrets-at-rest.md):
 * the secret columns take the sealed form (`v1:<key id>:<base64>`, about 130 characters; plain ones stay readable),
 * `webhook_private_targets` lists the directories the operator allowed private targets, and an attempt keeps the
 * operator's detail of a failure (`error_detail`) beside the coarse reason the client is shown (`error`).
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  if (mysql) {
    await knex.raw(
      'ALTER TABLE webhook_endpoints MODIFY secret VARCHAR(255) COLLATE utf8mb4_bin NOT NULL, MODIFY previous_secret VARCHAR(255) COLLATE utf8mb4_bin NULL',
    );
  }
  // SQLite does not enforce VARCHAR lengths: its columns take the longer form as they are.
  await knex.raw('ALTER TABLE webhook_deliveries ADD COLUMN error_detail VARCHAR(500) NULL');
  const table = mysql ? 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci' : '';
  const directory = mysql ? 'VARCHAR(128) COLLATE utf8mb4_bin NOT NULL' : 'VARCHAR(128) NOT NULL';
  await knex.raw(`CREATE TABLE webhook_private_targets (directory ${directory} PRIMARY KEY, allowed_at BIGINT NOT NULL) ${table}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_private_targets');
  await knex.schema.alterTable('webhook_deliveries', (t) => t.dropColumn('error_detail'));
  // The secret columns stay wide: sealed values may be in them.
}
