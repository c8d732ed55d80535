import type { Knex } from 'knex';

/**
 * Retention removes events by `created`, oldest first: without this index
 * each run read the whole table (4.5-5 s at a million events, in every
 * process at start and every ten minutes; docs/benchmarks.md#events).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX events_created_index ON events (created, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => t.dropIndex([], 'events_created_index'));
}
