import type { Knex } from 'knex';
import type { ChangeEvent, ClaimedDelivery, DeliveryOutcome, EventData, EventType, WebhookDeliveryQueuePort } from '@logi/domain';
import { isMysql } from '../sql-dialect.js';

/** Due attempts looked at per claim, beyond what is taken (some endpoints may have no free slot). */
const CANDIDATES_PER_SLOT = 4;

/**
 * The pending rows of `webhook_deliveries` as a queue: a claim locks only due attempt rows and leases them,
 * so processes take different rows and a dead one's come due again (docs/contribute/decisions/0018-webhook-deliveries-in-the-database.md).
 */
export class KnexWebhookDeliveryQueue implements WebhookDeliveryQueuePort {
  private readonly mysql: boolean;

  constructor(private readonly knex: Knex) {
    this.mysql = isMysql(knex);
  }

  async claimDue(now: number, limit: number, slotsFor: (endpointId: number) => number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const work = async (trx: Knex.Transaction) => {
      const due = trx('webhook_deliveries')
        .select('id', 'endpoint_id', 'event_id', 'event_type', 'attempt')
        .where('status', 'pending')
        .andWhere('next_attempt_at', '<=', now)
        .orderBy([{ column: 'next_attempt_at' }, { column: 'id' }])
        .limit(limit * CANDIDATES_PER_SLOT);
      const rows = (await (this.mysql ? due.forUpdate().skipLocked() : due)) as Array<Record<string, unknown>>;
      if (rows.length === 0) return [];
      const endpointIds = [...new Set(rows.map((row) => Number(row.endpoint_id)))];
      const endpoints = new Map(
        (
          (await trx('webhook_endpoints')
            .select('id', 'url', 'enabled', 'secret', 'previous_secret', 'previous_secret_until', 'failing_since')
            .whereIn('id', endpointIds)) as Array<Record<string, unknown>>
        ).map((row) => [Number(row.id), row]),
      );
      const stale: number[] = [];
      const taken: Array<{ row: Record<string, unknown>; endpoint: Record<string, unknown> }> = [];
      const perEndpoint = new Map<number, number>();
      for (const row of rows) {
        const endpointId = Number(row.endpoint_id);
        const endpoint = endpoints.get(endpointId);
        if (!endpoint || Number(endpoint.enabled) !== 1) {
          stale.push(Number(row.id));
          continue;
        }
        if (taken.length >= limit) continue;
        const used = perEndpoint.get(endpointId) ?? 0;
        if (used >= slotsFor(endpointId)) continue;
        perEndpoint.set(endpointId, used + 1);
        taken.push({ row, endpoint });
      }
      if (stale.length > 0) {
        await trx('webhook_deliveries')
          .whereIn('id', stale)
          .update({ status: 'failed', error: 'The endpoint is disabled: not sent (replay it once enabled).', next_attempt_at: null });
      }
      if (taken.length > 0) {
        await trx('webhook_deliveries')
          .whereIn(
            'id',
            taken.map(({ row }) => Number(row.id)),
          )
          .update({ next_attempt_at: now + leaseSeconds });
      }
      return taken;
    };
    const claimed = await (this.mysql ? this.knex.transaction(work, { isolationLevel: 'read committed' }) : this.knex.transaction(work));
    const events = await this.eventsById(claimed.map(({ row }) => Number(row.event_id)));
    return claimed.map(({ row, endpoint }) => ({
      delivery: {
        id: Number(row.id),
        endpointId: Number(row.endpoint_id),
        eventId: Number(row.event_id),
        eventType: String(row.event_type) as EventType,
        attempt: Number(row.attempt),
      },
      url: String(endpoint.url),
      secrets: {
        current: String(endpoint.secret),
        previous: endpoint.previous_secret == null ? null : String(endpoint.previous_secret),
        previousUntil: endpoint.previous_secret_until == null ? null : Number(endpoint.previous_secret_until),
      },
      failingSince: endpoint.failing_since == null ? null : Number(endpoint.failing_since),
      event: events.get(Number(row.event_id)) ?? null,
    }));
  }

  async record(outcomes: readonly DeliveryOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    await this.knex.transaction(async (trx) => {
      for (const outcome of outcomes) {
        await trx('webhook_deliveries')
          .where({ id: outcome.deliveryId })
          .update({
            status: outcome.succeeded ? 'succeeded' : 'failed',
            response_status: outcome.responseStatus,
            error: outcome.error === null ? null : outcome.error.slice(0, 500),
            next_attempt_at: outcome.retryAt,
          });
      }
      const retries = outcomes.filter((outcome) => outcome.retryAt !== null);
      if (retries.length > 0) {
        const rows = (await trx('webhook_deliveries')
          .select('id', 'endpoint_id', 'event_id', 'event_type', 'attempt')
          .whereIn(
            'id',
            retries.map((outcome) => outcome.deliveryId),
          )) as Array<Record<string, unknown>>;
        const byId = new Map(rows.map((row) => [Number(row.id), row]));
        await trx('webhook_deliveries').insert(
          retries.map((outcome) => {
            const row = byId.get(outcome.deliveryId)!;
            return {
              endpoint_id: row.endpoint_id,
              event_id: row.event_id,
              event_type: row.event_type,
              attempt: Number(row.attempt) + 1,
              status: 'pending',
              created: outcome.now,
              next_attempt_at: outcome.retryAt,
            };
          }),
        );
      }
      // An endpoint row is written only when its state changes: successes of a healthy endpoint touch nothing.
      for (const outcome of outcomes) {
        const endpoint = () => trx('webhook_endpoints').where({ id: outcome.endpointId });
        if (outcome.succeeded) {
          if (outcome.endpointWasFailing) await endpoint().whereNotNull('failing_since').update({ failing_since: null });
        } else if (outcome.disableReason !== null) {
          await endpoint().update({ failing_since: outcome.failingSince, enabled: 0, disabled_reason: outcome.disableReason });
        } else if (!outcome.endpointWasFailing) {
          await endpoint().whereNull('failing_since').update({ failing_since: outcome.failingSince });
        }
      }
    });
  }

  async removeFinished(createdBefore: number, limit: number): Promise<number> {
    const ids = (
      (await this.knex('webhook_deliveries')
        .select('id')
        .whereNot('status', 'pending')
        .andWhere('created', '<', createdBefore)
        .orderBy('id')
        .limit(limit)) as Array<{
        id: unknown;
      }>
    ).map((row) => Number(row.id));
    if (ids.length === 0) return 0;
    return this.knex('webhook_deliveries').whereIn('id', ids).delete();
  }

  private async eventsById(ids: number[]): Promise<Map<number, ChangeEvent>> {
    if (ids.length === 0) return new Map();
    const rows = (await this.knex('events')
      .select('id', 'type', 'created', 'data')
      .whereIn('id', [...new Set(ids)])) as Array<Record<string, unknown>>;
    return new Map(
      rows.map((row) => [
        Number(row.id),
        { id: Number(row.id), type: String(row.type) as EventType, created: Number(row.created), data: JSON.parse(String(row.data)) as EventData },
      ]),
    );
  }
}
