import type { Knex } from 'knex';

/** A pending attempt as `webhook_deliveries` stores it. */
export interface PendingDeliveryRow {
  endpoint_id: number;
  event_id: number;
  event_type: string;
  attempt: number;
  status: 'pending';
  created: number;
  next_attempt_at: number;
  replay?: number;
}

/** Rows per INSERT: far below the bound parameters of either database. */
const ROWS_PER_INSERT = 100;

/**
 * The one way pending attempts are added: inserted, then each endpoint's next due time brought forward in the same
 * transaction, so a claim that reads only endpoints due by that time finds them
 * (docs/contribute/decisions/0038-fair-webhook-claims.md, "Next due time").
 */
export async function addPendingDeliveries(db: Knex | Knex.Transaction, rows: readonly PendingDeliveryRow[]): Promise<void> {
  if (rows.length === 0) return;
  const work = async (trx: Knex.Transaction) => {
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) await trx('webhook_deliveries').insert(rows.slice(start, start + ROWS_PER_INSERT));
    await bringForward(trx, earliestByEndpoint(rows.map((row) => ({ endpointId: row.endpoint_id, dueAt: row.next_attempt_at }))));
  };
  await (db.isTransaction ? work(db as Knex.Transaction) : db.transaction(work));
}

/** Each endpoint's earliest due time among these attempts. */
export function earliestByEndpoint(attempts: ReadonlyArray<{ endpointId: number; dueAt: number }>): Map<number, number> {
  const earliest = new Map<number, number>();
  for (const { endpointId, dueAt } of attempts) {
    const known = earliest.get(endpointId);
    if (known === undefined || dueAt < known) earliest.set(endpointId, dueAt);
  }
  return earliest;
}

/**
 * Brings each endpoint's next due time forward to the given time (never later) and raises its `due_version`, after the
 * attempts that need it are written (in their transaction, or after their commit). Endpoints in id order, one statement
 * per distinct time: two writers lock the same endpoint rows in the same order.
 */
export async function bringForward(db: Knex | Knex.Transaction, dueByEndpoint: ReadonlyMap<number, number>): Promise<void> {
  const byTime = new Map<number, number[]>();
  for (const [endpointId, dueAt] of [...dueByEndpoint].sort(([a], [b]) => a - b)) {
    const ids = byTime.get(dueAt) ?? [];
    ids.push(endpointId);
    byTime.set(dueAt, ids);
  }
  for (const [dueAt, ids] of byTime) {
    await db('webhook_endpoints')
      .whereIn('id', ids)
      .update({
        next_due_at: db.raw('CASE WHEN next_due_at IS NULL OR next_due_at > ? THEN ? ELSE next_due_at END', [dueAt, dueAt]),
        due_version: db.raw('due_version + 1'),
      });
  }
}

/** An endpoint as a claim read it: its next due time and the version of that time. */
export interface ReadNextDue {
  endpointId: number;
  nextDueAt: number | null;
  dueVersion: number;
}

/**
 * After a claim: sets each endpoint's next due time to its oldest pending attempt (later once a claim leased what was
 * due; NULL when nothing is pending). The oldest is read after the versions were, and an endpoint is written only if its
 * version is still the one read: a time brought forward in between (an attempt added or released beside the claim) is
 * kept, never overwritten by a later one. Returns the endpoints written.
 */
export async function settleNextDue(knex: Knex, endpoints: readonly ReadNextDue[]): Promise<number> {
  if (endpoints.length === 0) return 0;
  const oldest = new Map(
    (
      await knex('webhook_deliveries')
        .select('endpoint_id')
        .min<Array<{ endpoint_id: unknown; oldest: unknown }>>({ oldest: 'next_attempt_at' })
        .whereIn(
          'endpoint_id',
          endpoints.map((endpoint) => endpoint.endpointId),
        )
        .andWhere('status', 'pending')
        .groupBy('endpoint_id')
    ).map((row) => [Number(row.endpoint_id), row.oldest == null ? null : Number(row.oldest)]),
  );
  // The endpoints whose next due time changes, in one statement (a CASE per endpoint, each row still written only at
  // the version read): one round trip however many endpoints the claim read.
  const changed = [...endpoints]
    .sort((a, b) => a.endpointId - b.endpointId)
    .map((endpoint) => ({ ...endpoint, next: oldest.get(endpoint.endpointId) ?? null }))
    .filter((endpoint) => endpoint.next !== endpoint.nextDueAt);
  if (changed.length === 0) return 0;
  const cases = changed.map(() => 'WHEN ? THEN ?').join(' ');
  return knex('webhook_endpoints')
    .where((where) => {
      for (const endpoint of changed) where.orWhere({ id: endpoint.endpointId, due_version: endpoint.dueVersion });
    })
    .update({
      next_due_at: knex.raw(
        `CASE id ${cases} END`,
        changed.flatMap((endpoint) => [endpoint.endpointId, endpoint.next]),
      ),
    });
}
