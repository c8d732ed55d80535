import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * Claims pick per endpoint (its oldest pending attempt on the first index: one index entry per endpoint however deep
 * its backlog), and a replay is known to be running from the database (docs/contribute/decisions/0038-fair-webhook-claims.md):
 * `replay` marks the first attempts a replay queued (found pending by one dive on the second index), and an endpoint's
 * `replay_inserting_until` is a lease while a replay is still queueing its attempts.
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  await knex.raw('CREATE INDEX webhook_deliveries_endpoint_due_index ON webhook_deliveries (endpoint_id, status, next_attempt_at)');
  await knex.raw(`ALTER TABLE webhook_deliveries ADD COLUMN replay ${mysql ? 'TINYINT' : 'INTEGER'} NOT NULL DEFAULT 0`);
  await knex.raw('CREATE INDEX webhook_deliveries_replay_index ON webhook_deliveries (endpoint_id, replay, status)');
  await knex.raw('ALTER TABLE webhook_endpoints ADD COLUMN replay_inserting_until BIGINT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => t.dropColumn('replay_inserting_until'));
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropIndex([], 'webhook_deliveries_replay_index');
    t.dropIndex([], 'webhook_deliveries_endpoint_due_index');
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => t.dropColumn('replay'));
}
