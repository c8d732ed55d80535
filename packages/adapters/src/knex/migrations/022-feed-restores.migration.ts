import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * One row per `pnpm cli db:after-restore`: where the restored feed ended and where new events start. The feed
 * answers 410 for a cursor between the two (docs/contribute/decisions/0051-after-a-restore.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('feed_restores', (t) => {
    if (isMysql(knex)) {
      t.engine('InnoDB');
      t.charset('utf8mb4');
      t.collate('utf8mb4_unicode_ci');
    }
    t.increments('id').primary();
    t.bigInteger('restored_end').notNullable();
    t.bigInteger('first_new_id').notNullable();
    t.bigInteger('created').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('feed_restores');
}
