import type { Knex } from 'knex';
import {
  shareDeliverySlots,
  type ChangeEvent,
  type ClaimedDelivery,
  type DeliveryOutcome,
  type DeliverySlotBounds,
  type DueEndpoint,
  type EventData,
  type EventType,
  type WebhookDeliveryQueuePort,
} from '@logi/domain';
import { isMysql } from '../sql-dialect.js';
import { addPendingDeliveries, bringForward, earliestByEndpoint, settleNextDue, type ReadNextDue } from './pending-deliveries.js';

type Row = Record<string, unknown>;

/** How often a claim reads every endpoint, not only those due (see the class). */
const FULL_PASS_SECONDS = 60;

/**
 * The pending rows of `webhook_deliveries` as a queue: a claim locks only due attempt rows and leases them,
 * so processes take different rows and a dead one's come due again (docs/contribute/decisions/0018-webhook-deliveries-in-the-database.md).
 * A claim picks per endpoint, never from one window of the oldest due attempts, so an endpoint without a free slot
 * holds back no other whatever its backlog (docs/contribute/decisions/0038-fair-webhook-claims.md).
 * A claim reads only endpoints whose next due time has come, so its cost grows with due work, not with the number of
 * endpoints; once a minute (and at a process's first claim) it reads every endpoint and mends any next due time an
 * attempt written outside this service left behind.
 */
export class KnexWebhookDeliveryQueue implements WebhookDeliveryQueuePort {
  private readonly mysql: boolean;
  /** MariaDB: two claims in flight, kept apart by SKIP LOCKED; SQLite has one writer, a second claim would only wait. */
  readonly claimsInFlight: number;
  /** When (Unix seconds) this process last read every endpoint; null before its first claim. */
  private fullPassAt: number | null = null;

  constructor(
    private readonly knex: Knex,
    private readonly fullPassSeconds = FULL_PASS_SECONDS,
  ) {
    this.mysql = isMysql(knex);
    this.claimsInFlight = this.mysql ? 2 : 1;
  }

  async claimDue(now: number, bounds: DeliverySlotBounds, leaseSeconds: number): Promise<ClaimedDelivery[]> {
    if (bounds.limit <= 0) return [];
    const fullPass = this.fullPassAt === null || now - this.fullPassAt >= this.fullPassSeconds;
    // The endpoints read, with the next due time and version each had: set to their oldest pending once the claim is in.
    let read: ReadNextDue[] = [];
    // Enabled endpoints this claim left due attempts of (no free slot, or more due than it took): their next due time,
    // at or before now, stays as it is (it is never later than their oldest pending), and the claim that drains them
    // settles it. With a backlog, a claim then writes no next due time at all (docs/benchmarks.md, "Issue 38").
    const leftDue = new Set<number>();
    const work = async (trx: Knex.Transaction) => {
      // One index entry per endpoint, its oldest pending attempt (due when that one is): a deep backlog, or many
      // attempts not yet due, cost their endpoint one entry here (ADR 0038).
      const oldestPending = trx('webhook_deliveries as d')
        .select('d.next_attempt_at')
        .whereRaw('d.endpoint_id = e.id')
        .andWhere('d.status', 'pending')
        .orderBy('d.next_attempt_at')
        .limit(1)
        .as('oldest_due');
      // Whether the operator allowed the endpoint's directory private targets (webhooks:allow-private), read with the claim.
      const privateAllowed = trx('webhook_private_targets as p').count({ n: '*' }).whereRaw('p.directory = e.directory').as('private_allowed');
      const endpointQuery = trx('webhook_endpoints as e').select(
        'e.id',
        'e.directory',
        'e.url',
        'e.enabled',
        'e.secret',
        'e.previous_secret',
        'e.previous_secret_until',
        'e.failing_since',
        'e.next_due_at',
        'e.due_version',
        oldestPending,
        privateAllowed,
      );
      // Only endpoints due by now (the next due time's index): never later than the oldest pending attempt.
      const endpointRows = (await (fullPass ? endpointQuery : endpointQuery.where('e.next_due_at', '<=', now))) as Row[];
      read = endpointRows
        // A full pass mends only the endpoints whose next due time is not their oldest pending attempt's, or that are due.
        .filter(
          (row) => !fullPass || nullableNumber(row.next_due_at) !== nullableNumber(row.oldest_due) || (row.oldest_due != null && Number(row.oldest_due) <= now),
        )
        .map((row) => ({ endpointId: Number(row.id), nextDueAt: nullableNumber(row.next_due_at), dueVersion: Number(row.due_version) }));
      const heads = endpointRows.filter((row) => row.oldest_due != null && Number(row.oldest_due) <= now);
      if (heads.length === 0) return [];
      const stale = heads.filter((row) => Number(row.enabled) !== 1).map((row) => Number(row.id));
      if (stale.length > 0) {
        await trx('webhook_deliveries')
          .whereIn('endpoint_id', stale)
          .andWhere('status', 'pending')
          .andWhere('next_attempt_at', '<=', now)
          .update({ status: 'failed', error: 'The endpoint is disabled: not sent (replay it once enabled).', next_attempt_at: null });
      }
      const endpoints = new Map(heads.filter((row) => Number(row.enabled) === 1).map((row) => [Number(row.id), row]));
      const ready = new Map<number, Row[]>();
      // What each endpoint's locking read was bounded to: a read that filled it may have left due attempts behind.
      const readLimits = new Map<number, number>();
      // Shares are planned as if each endpoint had as many due attempts as it may take; an endpoint given a share is
      // then read (its oldest, up to that bound), and the plan made again until every endpoint in it has been read.
      for (;;) {
        const due: DueEndpoint[] = [...endpoints.values()].map((row) => {
          const endpointId = Number(row.id);
          return {
            endpointId,
            directory: String(row.directory),
            oldestDue: Number(row.oldest_due),
            available: ready.get(endpointId)?.length ?? this.mostFor(row, bounds),
          };
        });
        const shares = shareDeliverySlots(due, bounds);
        const unread = [...shares.keys()].filter((endpointId) => !ready.has(endpointId));
        if (unread.length === 0) {
          const taken = [...shares].flatMap(([endpointId, count]) =>
            ready
              .get(endpointId)!
              .slice(0, count)
              .map((row) => ({ row, endpoint: endpoints.get(endpointId)! })),
          );
          if (taken.length > 0) {
            await trx('webhook_deliveries')
              .whereIn(
                'id',
                taken.map(({ row }) => Number(row.id)),
              )
              .update({ next_attempt_at: now + leaseSeconds });
          }
          for (const endpointId of endpoints.keys()) {
            const rows = ready.get(endpointId);
            const count = shares.get(endpointId) ?? 0;
            if (!rows || count < rows.length || rows.length >= readLimits.get(endpointId)!) leftDue.add(endpointId);
          }
          return taken;
        }
        const wanted = unread.map((endpointId) => ({ endpointId, limit: this.mostFor(endpoints.get(endpointId)!, bounds) }));
        for (const { endpointId, limit } of wanted) readLimits.set(endpointId, limit);
        const read = await this.oldestDue(trx, wanted, now);
        for (const endpointId of unread) ready.set(endpointId, read.get(endpointId) ?? []);
      }
    };
    const claimed = await (this.mysql ? this.knex.transaction(work, { isolationLevel: 'read committed' }) : this.knex.transaction(work));
    if (fullPass) this.fullPassAt = now;
    // A full pass settles every endpoint it read, as it mends times written around this adapter.
    await settleNextDue(this.knex, fullPass ? read : read.filter((endpoint) => !leftDue.has(endpoint.endpointId)));
    const events = await this.eventsById(claimed.map(({ row }) => Number(row.event_id)));
    return claimed.map(({ row, endpoint }) => ({
      delivery: {
        id: Number(row.id),
        endpointId: Number(row.endpoint_id),
        eventId: Number(row.event_id),
        eventType: String(row.event_type) as EventType,
        attempt: Number(row.attempt),
      },
      directory: String(endpoint.directory),
      url: String(endpoint.url),
      secrets: {
        current: String(endpoint.secret),
        previous: endpoint.previous_secret == null ? null : String(endpoint.previous_secret),
        previousUntil: endpoint.previous_secret_until == null ? null : Number(endpoint.previous_secret_until),
      },
      privateTargetsAllowed: Number(endpoint.private_allowed) > 0,
      failingSince: endpoint.failing_since == null ? null : Number(endpoint.failing_since),
      event: events.get(Number(row.event_id)) ?? null,
    }));
  }

  /** The most attempts a claim may take of this endpoint. */
  private mostFor(endpoint: Row, bounds: DeliverySlotBounds): number {
    return Math.max(0, Math.min(bounds.limit, bounds.endpointSlots(Number(endpoint.id)), bounds.directorySlots(String(endpoint.directory))));
  }

  /**
   * Each endpoint's oldest due attempts, up to its limit, locked (MariaDB: rows another claim holds are passed over, so
   * two claims in flight never take the same attempt), in one statement for all the endpoints: one locking read per
   * endpoint, joined with UNION ALL, each still on the per-endpoint index (ADR 0038, "Set-based claims").
   */
  private async oldestDue(trx: Knex.Transaction, wanted: ReadonlyArray<{ endpointId: number; limit: number }>, now: number): Promise<Map<number, Row[]>> {
    const byEndpoint = new Map<number, Row[]>();
    const parts = wanted
      .filter(({ limit }) => limit > 0)
      .map(({ endpointId, limit }) => {
        // MariaDB would take the (status, next_attempt_at) index for an endpoint with a deep backlog, and walk other
        // endpoints' older rows to find its few (ADR 0038): the per-endpoint index reads exactly the rows taken.
        const table = this.mysql ? trx.raw('?? FORCE INDEX (??)', ['webhook_deliveries', 'webhook_deliveries_endpoint_due_index']) : 'webhook_deliveries';
        const rows = trx
          .from(table)
          .select('id', 'endpoint_id', 'event_id', 'event_type', 'attempt', 'next_attempt_at')
          .where({ endpoint_id: endpointId, status: 'pending' })
          .andWhere('next_attempt_at', '<=', now)
          .orderBy([{ column: 'next_attempt_at' }, { column: 'id' }])
          .limit(limit);
        return (this.mysql ? rows.forUpdate().skipLocked() : rows).toSQL().toNative();
      });
    if (parts.length === 0) return byEndpoint;
    // MariaDB takes each part in parentheses (its own ORDER BY, LIMIT and lock); SQLite only as a subquery.
    const sql = parts.map((part) => (this.mysql ? `(${part.sql})` : `SELECT * FROM (${part.sql})`)).join(' UNION ALL ');
    const bindings = parts.flatMap((part) => part.bindings as Knex.RawBinding[]);
    const result = (await trx.raw(sql, bindings)) as unknown;
    const rows = (this.mysql ? (result as [Row[]])[0] : result) as Row[];
    for (const row of rows) {
      const endpointId = Number(row.endpoint_id);
      const list = byEndpoint.get(endpointId) ?? [];
      list.push(row);
      byEndpoint.set(endpointId, list);
    }
    // Each endpoint's oldest first, as its part read them (UNION ALL keeps no order of its own).
    for (const list of byEndpoint.values()) list.sort((a, b) => Number(a.next_attempt_at) - Number(b.next_attempt_at) || Number(a.id) - Number(b.id));
    return byEndpoint;
  }

  async record(outcomes: readonly DeliveryOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    // Outcomes that write the same values (every success answered 200, say) are one statement: a batch is a few
    // round trips rather than one per attempt.
    const sameWrite = new Map<string, { values: Row; ids: number[] }>();
    for (const outcome of outcomes) {
      const values = {
        status: outcome.succeeded ? 'succeeded' : 'failed',
        response_status: outcome.responseStatus,
        error: outcome.error === null ? null : outcome.error.slice(0, 500),
        error_detail: outcome.errorDetail === null ? null : outcome.errorDetail.slice(0, 500),
        next_attempt_at: outcome.retryAt,
      };
      const key = JSON.stringify(values);
      const group = sameWrite.get(key);
      if (group) group.ids.push(outcome.deliveryId);
      else sameWrite.set(key, { values, ids: [outcome.deliveryId] });
    }
    const writes = [...sameWrite.values()];
    // The usual batch, healthy endpoints answering alike: one statement is atomic by itself, so it goes without a
    // transaction (one round trip where BEGIN and COMMIT made three; docs/benchmarks.md, "Webhook delivery").
    if (writes.length === 1 && outcomes.every((outcome) => !endpointChanges(outcome) && outcome.retryAt === null)) {
      await this.knex('webhook_deliveries').whereIn('id', writes[0]!.ids).update(writes[0]!.values);
      return;
    }
    await this.knex.transaction(async (trx) => {
      for (const { values, ids } of writes) await trx('webhook_deliveries').whereIn('id', ids).update(values);
      const retries = outcomes.filter((outcome) => outcome.retryAt !== null);
      if (retries.length > 0) {
        const rows = (await trx('webhook_deliveries')
          .select('id', 'endpoint_id', 'event_id', 'event_type', 'attempt')
          .whereIn(
            'id',
            retries.map((outcome) => outcome.deliveryId),
          )) as Array<Record<string, unknown>>;
        const byId = new Map(rows.map((row) => [Number(row.id), row]));
        await addPendingDeliveries(
          trx,
          retries.map((outcome) => {
            const row = byId.get(outcome.deliveryId)!;
            return {
              endpoint_id: Number(row.endpoint_id),
              event_id: Number(row.event_id),
              event_type: String(row.event_type),
              attempt: Number(row.attempt) + 1,
              status: 'pending' as const,
              created: outcome.now,
              next_attempt_at: outcome.retryAt!,
            };
          }),
        );
      }
      // An endpoint row is written only when its state changes: successes of a healthy endpoint touch nothing.
      for (const outcome of outcomes) {
        const change = endpointChanges(outcome);
        if (!change) continue;
        const endpoint = trx('webhook_endpoints').where({ id: outcome.endpointId });
        if (change === 'recovered') await endpoint.whereNotNull('failing_since').update({ failing_since: null });
        else if (change === 'disabled') await endpoint.update({ failing_since: outcome.failingSince, enabled: 0, disabled_reason: outcome.disableReason });
        else await endpoint.whereNull('failing_since').update({ failing_since: outcome.failingSince });
      }
    });
  }

  async release(deliveryIds: readonly number[], now: number): Promise<void> {
    if (deliveryIds.length === 0) return;
    await this.knex.transaction(async (trx) => {
      const endpoints = (await trx('webhook_deliveries')
        .distinct('endpoint_id')
        .whereIn('id', [...deliveryIds])
        .andWhere('status', 'pending')) as Array<{ endpoint_id: unknown }>;
      await trx('webhook_deliveries')
        .whereIn('id', [...deliveryIds])
        .andWhere('status', 'pending')
        .update({ next_attempt_at: now });
      // Due again now: their endpoints' next due time comes forward with them.
      await bringForward(trx, earliestByEndpoint(endpoints.map((row) => ({ endpointId: Number(row.endpoint_id), dueAt: now }))));
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

/** What an outcome changes of its endpoint's row: a failing one recovered, one disabled, a failure streak begun, or nothing. */
function endpointChanges(outcome: DeliveryOutcome): 'recovered' | 'disabled' | 'failing' | null {
  if (outcome.succeeded) return outcome.endpointWasFailing ? 'recovered' : null;
  if (outcome.disableReason !== null) return 'disabled';
  return outcome.endpointWasFailing ? null : 'failing';
}

function nullableNumber(value: unknown): number | null {
  return value == null ? null : Number(value);
}
