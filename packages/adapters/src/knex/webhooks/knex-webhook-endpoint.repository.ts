import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';
import {
  endpointWants,
  type NewWebhookEndpoint,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointChanges,
  type WebhookEndpointRepositoryPort,
} from '@logi/domain';
import { DELIVERY_COLUMNS, ENDPOINT_COLUMNS, firstAttempt, toDelivery, toEndpoint } from './webhook-rows.js';
import { addPendingDeliveries } from './pending-deliveries.js';

/** Events looked at per query when replaying, and attempts inserted per statement. */
const REPLAY_PAGE = 1_000;
/** A replay still queueing its attempts holds the endpoint's replay this long, renewed each page: one that dies mid-way frees it. */
const REPLAY_QUEUEING_LEASE_SECONDS = 60;

export class KnexWebhookEndpointRepository implements WebhookEndpointRepositoryPort {
  constructor(private readonly knex: Knex) {}

  /** Enabled endpoints of every directory whose attempts have all failed since their latest success (the operator's gauge). */
  async countFailing(): Promise<number> {
    const row = (await this.knex('webhook_endpoints').where('enabled', 1).whereNotNull('failing_since').count({ n: '*' }).first()) as
      { n: unknown } | undefined;
    return Number(row?.n ?? 0);
  }

  async create(endpoint: NewWebhookEndpoint, max: number): Promise<WebhookEndpoint | null> {
    return this.knex.transaction(async (trx) => {
      // The directory's rows are read under lock, so two creations at once cannot pass the bound together.
      const existing = await trx('webhook_endpoints').select('id').where({ directory: endpoint.directory }).forUpdate();
      if (existing.length >= max) return null;
      const [id] = await trx('webhook_endpoints').insert({
        directory: endpoint.directory,
        url: endpoint.url,
        event_types: JSON.stringify(endpoint.eventTypes),
        description: endpoint.description,
        enabled: 1,
        disabled_reason: null,
        secret: endpoint.secret,
        created: endpoint.created,
      });
      return toEndpoint(
        await trx('webhook_endpoints')
          .select(ENDPOINT_COLUMNS)
          .where({ id: Number(id) })
          .first<Record<string, unknown>>(),
      );
    });
  }

  async list(directory: string): Promise<WebhookEndpoint[]> {
    return ((await this.knex('webhook_endpoints').select(ENDPOINT_COLUMNS).where({ directory }).orderBy('id')) as Array<Record<string, unknown>>).map(
      toEndpoint,
    );
  }

  async find(directory: string, id: number): Promise<WebhookEndpoint | null> {
    const row = (await this.knex('webhook_endpoints').select(ENDPOINT_COLUMNS).where({ directory, id }).first()) as Record<string, unknown> | undefined;
    return row ? toEndpoint(row) : null;
  }

  async update(directory: string, id: number, changes: WebhookEndpointChanges): Promise<WebhookEndpoint | null> {
    const values: Record<string, unknown> = {};
    if (changes.url !== undefined) values.url = changes.url;
    if (changes.eventTypes !== undefined) values.event_types = JSON.stringify(changes.eventTypes);
    if (changes.description !== undefined) values.description = changes.description;
    if (changes.enabled !== undefined) {
      values.enabled = changes.enabled ? 1 : 0;
      // Enabling starts afresh: no reason, no failure streak carried over.
      if (changes.enabled) Object.assign(values, { disabled_reason: null, failing_since: null });
    }
    if (Object.keys(values).length > 0) await this.knex('webhook_endpoints').where({ directory, id }).update(values);
    return this.find(directory, id);
  }

  async remove(directory: string, id: number): Promise<boolean> {
    return this.knex.transaction(async (trx) => {
      const removed = await trx('webhook_endpoints').where({ directory, id }).delete();
      if (removed > 0) await trx('webhook_deliveries').where({ endpoint_id: id }).delete();
      return removed > 0;
    });
  }

  async rotateSecret(directory: string, id: number, secret: string, previousUntil: number): Promise<boolean> {
    const updated = await this.knex('webhook_endpoints')
      .where({ directory, id })
      .update({ previous_secret: this.knex.ref('secret'), previous_secret_until: previousUntil, secret });
    return updated > 0;
  }

  async listDeliveries(directory: string, endpointId: number, before: number | null, limit: number): Promise<WebhookDelivery[]> {
    const query = this.knex('webhook_deliveries as d')
      .join('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
      .select(DELIVERY_COLUMNS.map((column) => `d.${column}`))
      .where({ 'w.directory': directory, 'd.endpoint_id': endpointId });
    if (before !== null) query.andWhere('d.id', '<', before);
    return ((await query.orderBy('d.id', 'desc').limit(limit)) as Array<Record<string, unknown>>).map(toDelivery);
  }

  async replay(directory: string, endpointId: number, afterEventId: number, now: number): Promise<number | 'running'> {
    const begun = await this.beginReplay(directory, endpointId, now);
    if (begun !== 'begun') return begun === 'running' ? 'running' : 0;
    const started = Date.now();
    const leaseEnd = () => now + Math.ceil((Date.now() - started) / 1000) + REPLAY_QUEUEING_LEASE_SECONDS;
    const endpoint = (await this.find(directory, endpointId))!;
    let after = afterEventId;
    let scheduled = 0;
    try {
      for (;;) {
        const events = (await this.knex('events')
          .select('id', 'type')
          .where({ directory })
          .andWhere('id', '>', after)
          .orderBy('id')
          .limit(REPLAY_PAGE)) as Array<{
          id: unknown;
          type: unknown;
        }>;
        if (events.length === 0) return scheduled;
        const rows = events
          .map((event) => ({ id: Number(event.id), type: String(event.type) }))
          .filter((event) => endpointWants(endpoint.eventTypes, event.type))
          .map((event) => ({ ...firstAttempt(endpointId, event, now), replay: 1 }));
        await addPendingDeliveries(this.knex, rows);
        scheduled += rows.length;
        after = Number(events.at(-1)!.id);
        await this.knex('webhook_endpoints').where({ id: endpointId }).update({ replay_inserting_until: leaseEnd() });
      }
    } finally {
      await this.knex('webhook_endpoints').where({ id: endpointId }).update({ replay_inserting_until: null });
    }
  }

  /**
   * Takes the endpoint's replay, unless an earlier one is still queueing (its lease) or a first attempt it queued is
   * still pending: under the endpoint row's lock, so two replays at once cannot both begin, in any process.
   */
  private async beginReplay(directory: string, endpointId: number, now: number): Promise<'begun' | 'running' | 'missing'> {
    const work = async (trx: Knex.Transaction) => {
      const endpoint = (await trx('webhook_endpoints').select('replay_inserting_until').where({ directory, id: endpointId }).forUpdate().first()) as
        Record<string, unknown> | undefined;
      if (!endpoint) return 'missing';
      if (endpoint.replay_inserting_until != null && Number(endpoint.replay_inserting_until) > now) return 'running';
      // Retries are new rows without the mark: only a replay's first attempts hold it.
      const unsent = (await trx('webhook_deliveries').select('id').where({ endpoint_id: endpointId, replay: 1, status: 'pending' }).first()) as unknown;
      if (unsent) return 'running';
      await trx('webhook_endpoints')
        .where({ id: endpointId })
        .update({ replay_inserting_until: now + REPLAY_QUEUEING_LEASE_SECONDS });
      return 'begun';
    };
    return isMysql(this.knex) ? this.knex.transaction(work, { isolationLevel: 'read committed' }) : this.knex.transaction(work);
  }
}
