import type { Knex } from 'knex';

/**
 * When each export was last claimed (Unix ms): runners take the waiting export of the directory served longest ago,
 * so one directory's backlog never holds every runner (docs/contribute/decisions/0049-export-bounds.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('exports', (t) => {
    t.bigInteger('claimed_ms').nullable();
    t.index(['directory', 'claimed_ms'], 'exports_directory_claimed_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('exports', (t) => {
    t.dropIndex(['directory', 'claimed_ms'], 'exports_directory_claimed_index');
    t.dropColumn('claimed_ms');
  });
}
