import type { Knex } from 'knex';
import type { ChangeEvent, ClaimedDelivery, DeliveryOutcome, EventData, EventType, WebhookDeliveryQueuePort } from '@logi/domain';
import { isMysql } from '../sql-dialect.js';

/** Due attempts looked at per claim, beyond what is taken (some endpoints may have no free slot). */
const CANDIDATES_PER_SLOT = 4;

/**
 * The pending rows of `webhook_deliveries` as a queue. A claim is one
 * transaction: due rows of enabled endpoints whose lease is free (MariaDB:
 * `FOR UPDATE SKIP LOCKED`, so processes claiming at once take different
 * rows), at most the free slots of each endpoint, leased until
 * `now + leaseSeconds`. A process that dies holding a lease leaves the row
 * pending; another takes it when the lease ends.
 */
export class KnexWebhookDeliveryQueue implements WebhookDeliveryQueuePort {
  private readonly mysql: boolean;

  constructor(private readonly knex: Knex) {
    this.mysql = isMysql(knex);
  }

  async claimDue(now: number, limit: number, slotsFor: (endpointId: number) => number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const claimed = await this.knex.transaction(async (trx) => {
      const candidates = trx('webhook_deliveries as d')
        .join('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
        .select('d.id', 'd.endpoint_id', 'd.event_id', 'd.event_type', 'd.attempt', 'w.url', 'w.secret', 'w.previous_secret', 'w.previous_secret_until', 'w.failing_since')
        .where('d.status', 'pending')
        .andWhere('d.next_attempt_at', '<=', now)
        .andWhere((q) => q.whereNull('d.locked_until').orWhere('d.locked_until', '<', now))
        .andWhere('w.enabled', 1)
        .orderBy([{ column: 'd.next_attempt_at' }, { column: 'd.id' }])
        .limit(limit * CANDIDATES_PER_SLOT);
      const rows = (await (this.mysql ? candidates.forUpdate('d').skipLocked() : candidates)) as Array<Record<string, unknown>>;
      const taken: Array<Record<string, unknown>> = [];
      const perEndpoint = new Map<number, number>();
      for (const row of rows) {
        if (taken.length >= limit) break;
        const endpointId = Number(row.endpoint_id);
        const used = perEndpoint.get(endpointId) ?? 0;
        if (used >= slotsFor(endpointId)) continue;
        perEndpoint.set(endpointId, used + 1);
        taken.push(row);
      }
      if (taken.length > 0) {
        await trx('webhook_deliveries')
          .whereIn(
            'id',
            taken.map((row) => Number(row.id)),
          )
          .update({ locked_until: now + leaseSeconds });
      }
      return taken;
    });
    const events = await this.eventsById(claimed.map((row) => Number(row.event_id)));
    return claimed.map((row) => ({
      delivery: {
        id: Number(row.id),
        endpointId: Number(row.endpoint_id),
        eventId: Number(row.event_id),
        eventType: String(row.event_type) as EventType,
        attempt: Number(row.attempt),
      },
      url: String(row.url),
      secrets: {
        current: String(row.secret),
        previous: row.previous_secret == null ? null : String(row.previous_secret),
        previousUntil: row.previous_secret_until == null ? null : Number(row.previous_secret_until),
      },
      failingSince: row.failing_since == null ? null : Number(row.failing_since),
      event: events.get(Number(row.event_id)) ?? null,
    }));
  }

  async record(outcome: DeliveryOutcome): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx('webhook_deliveries')
        .where({ id: outcome.deliveryId })
        .update({
          status: outcome.succeeded ? 'succeeded' : 'failed',
          response_status: outcome.responseStatus,
          error: outcome.error === null ? null : outcome.error.slice(0, 500),
          next_attempt_at: outcome.retryAt,
          locked_until: null,
        });
      if (outcome.retryAt !== null) {
        const row = (await trx('webhook_deliveries').select('endpoint_id', 'event_id', 'event_type', 'attempt').where({ id: outcome.deliveryId }).first()) as Record<string, unknown>;
        await trx('webhook_deliveries').insert({
          endpoint_id: row.endpoint_id,
          event_id: row.event_id,
          event_type: row.event_type,
          attempt: Number(row.attempt) + 1,
          status: 'pending',
          created: outcome.now,
          next_attempt_at: outcome.retryAt,
        });
      }
      const endpoint = trx('webhook_endpoints').where({ id: outcome.endpointId });
      if (outcome.succeeded) await endpoint.update({ failing_since: null });
      else if (outcome.disableReason !== null) await endpoint.update({ failing_since: outcome.failingSince, enabled: 0, disabled_reason: outcome.disableReason });
      else await endpoint.whereNull('failing_since').update({ failing_since: outcome.failingSince });
    });
  }

  async removeFinished(createdBefore: number, limit: number): Promise<number> {
    const ids = (
      (await this.knex('webhook_deliveries').select('id').whereNot('status', 'pending').andWhere('created', '<', createdBefore).orderBy('id').limit(limit)) as Array<{
        id: unknown;
      }>
    ).map((row) => Number(row.id));
    if (ids.length === 0) return 0;
    return this.knex('webhook_deliveries').whereIn('id', ids).delete();
  }

  private async eventsById(ids: number[]): Promise<Map<number, ChangeEvent>> {
    if (ids.length === 0) return new Map();
    const rows = (await this.knex('events').select('id', 'type', 'created', 'data').whereIn('id', [...new Set(ids)])) as Array<Record<string, unknown>>;
    return new Map(
      rows.map((row) => [Number(row.id), { id: Number(row.id), type: String(row.type) as EventType, created: Number(row.created), data: JSON.parse(String(row.data)) as EventData }]),
    );
  }
}
