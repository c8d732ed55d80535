import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Knex } from 'knex';
import type { DeliveryOutcome, DeliverySlotBounds } from '@logi/domain';
import {
  addPendingDeliveries,
  KnexWebhookDeliveryQueue,
  KnexWebhookEndpointRepository,
  loadFixtures,
  Sha256ApiKeyHasher,
  type PendingDeliveryRow,
} from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture } from './knex-repository.fixture.js';

const NOW = 1_800_000_000;
const IDLE_ENDPOINTS = 2_000;
const LEASE = 30;
/** A queue that reads every endpoint only at its first claim: every later claim relies on the next due times alone. */
const NEVER = 1e9;

const bounds: DeliverySlotBounds = { limit: 16, endpointSlots: () => 4, directorySlots: () => 16 };

const attempt = (endpointId: number, due: number, extra: Partial<PendingDeliveryRow> = {}): PendingDeliveryRow => ({
  endpoint_id: endpointId,
  event_id: 1,
  event_type: 'invoice.updated',
  attempt: 1,
  status: 'pending',
  created: NOW,
  next_attempt_at: due,
  ...extra,
});

/** The rows the claim's read of webhook_endpoints returned, per claim. */
async function endpointRowsRead<T>(knex: Knex, work: () => Promise<T>): Promise<{ result: T; rows: number[] }> {
  const rows: number[] = [];
  const listener = (response: unknown, query: { sql?: string }) => {
    if (/from [`"]webhook_endpoints[`"] as [`"]e[`"]/i.test(query.sql ?? '') && Array.isArray(response)) rows.push(response.length);
  };
  knex.on('query-response', listener);
  try {
    return { result: await work(), rows };
  } finally {
    knex.off('query-response', listener);
  }
}

/**
 * A claim reads only endpoints whose next due time has come (issue 35, point 8): its cost grows with due work, not with
 * the number of endpoints, and every way an attempt becomes due brings its endpoint's time forward, so none is missed.
 */
describe.each(PROFILES)('webhook next due times on %s', (profile) => {
  let db: TestDatabase;
  let queue: KnexWebhookDeliveryQueue;
  let busy: number;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'webhook_next_due');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    const endpoint = (id: number) => ({
      id,
      directory: NORTH,
      url: `https://hooks.example.com/${id}`,
      event_types: '[]',
      enabled: 1,
      secret: 'whsec_a',
      created: NOW,
    });
    const all = Array.from({ length: IDLE_ENDPOINTS + 1 }, (_, index) => endpoint(index + 1));
    for (let start = 0; start < all.length; start += 250) await db.knex('webhook_endpoints').insert(all.slice(start, start + 250));
    busy = IDLE_ENDPOINTS + 1;
    await db.knex('events').insert({ id: 1, directory: NORTH, type: 'invoice.updated', created: NOW, data: JSON.stringify({ object: { id: 101 } }) });
  });

  beforeEach(async () => {
    await db.knex('webhook_deliveries').delete();
    await db.knex('webhook_endpoints').update({ next_due_at: null });
    queue = new KnexWebhookDeliveryQueue(db.knex, NEVER);
    // The first claim of a process reads every endpoint; the tests look at the claims after it.
    await queue.claimDue(NOW - 3_600, bounds, LEASE);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it(`when ${IDLE_ENDPOINTS} endpoints have nothing due and one has, then a claim reads that one endpoint and takes its attempts`, async () => {
    await addPendingDeliveries(db.knex, [attempt(busy, NOW), attempt(busy, NOW)]);
    const { result, rows } = await endpointRowsRead(db.knex, () => queue.claimDue(NOW, bounds, LEASE));
    expect(result.map((item) => item.delivery.endpointId)).toEqual([busy, busy]);
    expect(rows).toEqual([1]);
    // Its next due time is now the lease's end: a claim before it reads no endpoint at all.
    expect(await nextDue(busy)).toBe(NOW + LEASE);
    expect((await endpointRowsRead(db.knex, () => queue.claimDue(NOW + 1, bounds, LEASE))).rows).toEqual([0]);
    if (profile === 'mariadb') {
      // The plan reads the next-due index, not the table.
      const sql = db.knex('webhook_endpoints as e').select('e.id').where('e.next_due_at', '<=', NOW).toSQL().toNative();
      const [plan] = (await db.knex.raw(`EXPLAIN ${sql.sql}`, sql.bindings)) as [Array<{ key: string | null; rows: number }>];
      expect(plan[0]!.key).toBe('webhook_endpoints_next_due_index');
      expect(Number(plan[0]!.rows)).toBeLessThan(10);
    }
  });

  it('when a leased attempt is never answered, then its endpoint is due again when the lease ends, and the attempt is taken again', async () => {
    await addPendingDeliveries(db.knex, [attempt(busy, NOW)]);
    const [first] = await queue.claimDue(NOW, bounds, LEASE);
    expect(await queue.claimDue(NOW + LEASE - 1, bounds, LEASE)).toEqual([]);
    const again = await queue.claimDue(NOW + LEASE, bounds, LEASE);
    expect(again.map((item) => item.delivery.id)).toEqual([first!.delivery.id]);
  });

  it('when a claimed attempt is given back, then its endpoint is due at once and the attempt is taken by the next claim', async () => {
    await addPendingDeliveries(db.knex, [attempt(busy, NOW)]);
    const [first] = await queue.claimDue(NOW, bounds, LEASE);
    await queue.release([first!.delivery.id], NOW + 1);
    expect(await nextDue(busy)).toBe(NOW + 1);
    expect((await queue.claimDue(NOW + 1, bounds, LEASE)).map((item) => item.delivery.id)).toEqual([first!.delivery.id]);
  });

  it('when a failure is recorded with a retry, then the endpoint is due at the retry time, and the retry is taken then', async () => {
    await addPendingDeliveries(db.knex, [attempt(busy, NOW)]);
    const [first] = await queue.claimDue(NOW, bounds, LEASE);
    await queue.record([failed(first!.delivery.id, NOW + 5)]);
    expect(await nextDue(busy)).toBe(NOW + 5);
    expect(await queue.claimDue(NOW + 4, bounds, LEASE)).toEqual([]);
    const retry = await queue.claimDue(NOW + 5, bounds, LEASE);
    expect(retry.map((item) => [item.delivery.endpointId, item.delivery.attempt])).toEqual([[busy, 2]]);
    await db.knex('webhook_endpoints').update({ failing_since: null });
  });

  it('when an endpoint is replayed, then the replayed attempts are due and claimed', async () => {
    const scheduled = await new KnexWebhookEndpointRepository(db.knex).replay(NORTH, busy, 0, NOW);
    expect(scheduled).toBe(1);
    const claimed = await queue.claimDue(NOW, bounds, LEASE);
    expect(claimed.map((item) => [item.delivery.endpointId, item.delivery.eventId])).toEqual([[busy, 1]]);
  });

  it('when an attempt is written outside the service (its endpoint not brought forward), then the next full pass, within a minute, finds it', async () => {
    const minutely = new KnexWebhookDeliveryQueue(db.knex, 60);
    await minutely.claimDue(NOW - 120, bounds, LEASE);
    await db.knex('webhook_deliveries').insert(attempt(7, NOW - 100));
    expect(await minutely.claimDue(NOW - 100, bounds, LEASE)).toEqual([]);
    expect((await minutely.claimDue(NOW - 60, bounds, LEASE)).map((item) => item.delivery.endpointId)).toEqual([7]);
  });

  async function nextDue(endpointId: number): Promise<number | null> {
    const row = (await db.knex('webhook_endpoints').select('next_due_at').where({ id: endpointId }).first()) as { next_due_at: unknown };
    return row.next_due_at == null ? null : Number(row.next_due_at);
  }
});

function failed(deliveryId: number, retryAt: number): DeliveryOutcome {
  return {
    deliveryId,
    endpointId: IDLE_ENDPOINTS + 1,
    succeeded: false,
    responseStatus: 500,
    error: 'answered 500',
    errorDetail: 'The endpoint answered 500.',
    retryAt,
    failingSince: NOW,
    disableReason: null,
    now: NOW,
    endpointWasFailing: false,
  };
}

/**
 * MariaDB, where writers run side by side (SQLite takes one writer at a time): an attempt added while a claim is settling
 * its endpoint's next due time is never hidden by it.
 */
describe('webhook next due times beside a claim on mariadb', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase('mariadb', 'webhook_next_due_race');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    await db
      .knex('webhook_endpoints')
      .insert({ id: 1, directory: NORTH, url: 'https://hooks.example.com/1', event_types: '[]', enabled: 1, secret: 'whsec_a', created: NOW });
    await db.knex('events').insert({ id: 1, directory: NORTH, type: 'invoice.updated', created: NOW, data: JSON.stringify({ object: { id: 101 } }) });
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('when an attempt is added (not yet committed) while a claim settles the endpoint, then the claim keeps its earlier due time and the next claim takes it', async () => {
    const queue = new KnexWebhookDeliveryQueue(db.knex, NEVER);
    await queue.claimDue(NOW - 3_600, bounds, LEASE);
    await addPendingDeliveries(db.knex, [attempt(1, NOW)]);
    const trx = await db.knex.transaction();
    let claim: Promise<unknown> | undefined;
    try {
      await addPendingDeliveries(trx, [attempt(1, NOW, { event_id: 1, attempt: 1 })]);
      // The claim takes the committed attempt, then its settling waits on the endpoint row the open transaction holds.
      claim = queue.claimDue(NOW, bounds, LEASE);
      await vi.waitFor(
        async () => {
          const [rows] = (await db.knex.raw(
            "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND COMMAND = 'Query' AND INFO LIKE 'update `webhook_endpoints` set `next_due_at` = CASE id %'",
          )) as [Array<{ n: unknown }>];
          expect(Number(rows[0]!.n)).toBe(1);
        },
        { timeout: 10_000, interval: 20 },
      );
    } finally {
      await trx.commit();
    }
    const first = (await claim) as Array<{ delivery: { id: number } }>;
    expect(first).toHaveLength(1);
    const next = await queue.claimDue(NOW, bounds, LEASE);
    expect(next).toHaveLength(1);
    expect(next[0]!.delivery.id).not.toBe(first[0]!.delivery.id);
  });
});
