import type { Knex } from 'knex';

/**
 * Each endpoint's next due time, never later than its oldest pending attempt, so that a claim reads only endpoints with
 * due work (its cost grows with due work, not with the number of endpoints), and `due_version`, raised whenever that time
 * is brought forward, so that a claim that moves it later never overwrites an earlier one written beside it
 * (docs/contribute/decisions/0038-fair-webhook-claims.md, "Next due time").
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.bigInteger('next_due_at').nullable();
    t.bigInteger('due_version').notNullable().defaultTo(0);
    t.index(['next_due_at'], 'webhook_endpoints_next_due_index');
  });
  await knex('webhook_endpoints').update({
    next_due_at: knex('webhook_deliveries as d')
      .min('d.next_attempt_at')
      .whereRaw('?? = ??', ['d.endpoint_id', 'webhook_endpoints.id'])
      .andWhere('d.status', 'pending'),
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropIndex(['next_due_at'], 'webhook_endpoints_next_due_index');
    t.dropColumn('next_due_at');
    t.dropColumn('due_version');
  });
}
