import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import type { ClaimedDelivery, DeliverWebhookUseCase, DeliveryOutcome, DeliverySlotBounds } from '@logi/domain';
import { addPendingDeliveries, KnexWebhookDeliveryQueue, loadFixtures, Sha256ApiKeyHasher, startWebhookDelivering } from '@logi/adapters';
import { countQueries, openTestDatabase, PROFILES, type Profile, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture, SOUTH } from './knex-repository.fixture.js';
import { answered500Outcome, succeededOutcome } from '../support/webhook-outcomes.js';

const NOW = 1_800_000_000;
const ENDPOINTS = [1, 2, 3, 4];

/** A claim's bounds: `limit` free slots, `perEndpoint` for each endpoint, `perDirectory` for each directory. */
function slots(limit: number, perEndpoint: number, perDirectory = limit): DeliverySlotBounds {
  return { limit, endpointSlots: () => perEndpoint, directorySlots: () => perDirectory };
}

/** Four enabled endpoints in two directories and one event, on `profile`; the attempts emptied before each test. */
function useClaimDatabase(profile: Profile) {
  const state = {} as { db: TestDatabase; pending: (endpointId: number, count: number) => Promise<void> };

  beforeAll(async () => {
    state.db = await openTestDatabase(profile, 'webhook_claim_sql');
    await loadFixtures(state.db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    await state.db.knex('webhook_endpoints').insert(
      ENDPOINTS.map((id) => ({
        id,
        directory: id % 2 === 0 ? SOUTH : NORTH,
        url: `https://hooks.example.com/${id}`,
        event_types: '[]',
        enabled: 1,
        secret: 'whsec_a',
        created: NOW,
      })),
    );
    await state.db.knex('events').insert({ id: 1, directory: NORTH, type: 'invoice.updated', created: NOW, data: JSON.stringify({ object: { id: 101 } }) });
  });

  afterAll(async () => {
    await state.db?.drop();
  });

  beforeEach(async () => {
    await state.db.knex('webhook_deliveries').delete();
    await state.db.knex('webhook_endpoints').update({ next_due_at: null });
  });

  state.pending = (endpointId: number, count: number) =>
    addPendingDeliveries(
      state.db.knex,
      Array.from({ length: count }, () => ({
        endpoint_id: endpointId,
        event_id: 1,
        event_type: 'invoice.updated',
        attempt: 1,
        status: 'pending' as const,
        created: NOW,
        next_attempt_at: NOW,
      })),
    );

  return state;
}

/** What one claim costs in statements (ADR 0038, "Set-based claims"). */
describe.each(PROFILES)('webhook claim statements on %s', (profile) => {
  const state = useClaimDatabase(profile);
  it('when four endpoints have more due attempts than a claim takes, then it is 7 statements (6 on SQLite); the claim that drains them, 9 (8)', async () => {
    for (const id of ENDPOINTS) await state.pending(id, 6);
    const queue = new KnexWebhookDeliveryQueue(state.db.knex);
    // The first claim of a process reads every endpoint (a full pass): the ones counted are ordinary ones after it.
    expect(await queue.claimDue(NOW, slots(4, 1), 60)).toHaveLength(4);
    const { result, queries } = await countQueries(state.db.knex, () => queue.claimDue(NOW, slots(16, 4), 60));
    expect(result).toHaveLength(16);
    expect(new Set(result.map((claimed) => claimed.delivery.endpointId))).toEqual(new Set(ENDPOINTS));
    // Was 15 on MariaDB and 14 on SQLite: a locking read per endpoint and a next-due write per endpoint. Now the
    // transaction (and on MariaDB its isolation level), the endpoints due, one locking read, the lease and the events;
    // each endpoint still has a due attempt, so its next due time (at or before now) stays and nothing settles it.
    const lockingReads = (sqls: string[]) =>
      sqls.filter((sql) => /^select .* for update skip locked/i.test(sql) || /^select \* from \(select/i.test(sql) || /^\(select/i.test(sql));
    const nextDueWrites = (sqls: string[]) => sqls.filter((sql) => /^update `webhook_endpoints`/i.test(sql));
    expect(lockingReads(queries)).toHaveLength(1);
    expect(nextDueWrites(queries)).toEqual([]);
    expect(queries.length).toBe(profile === 'mariadb' ? 7 : 6);
    expect(await nextDueTimes()).toEqual(ENDPOINTS.map(() => NOW));

    // The last due attempt of each: the claim then reads each endpoint's oldest pending (the lease's end) and writes it,
    // in one statement.
    const drained = await countQueries(state.db.knex, () => queue.claimDue(NOW, slots(16, 4), 60));
    expect(drained.result).toHaveLength(4);
    expect(lockingReads(drained.queries)).toHaveLength(1);
    expect(nextDueWrites(drained.queries)).toHaveLength(1);
    expect(drained.queries.length).toBe(profile === 'mariadb' ? 9 : 8);
    expect(await nextDueTimes()).toEqual(ENDPOINTS.map(() => NOW + 60));
    expect(await queue.claimDue(NOW + 1, slots(16, 4), 60)).toEqual([]);
  });

  /** Each endpoint's next due time, in id order. */
  const nextDueTimes = async () =>
    ((await state.db.knex('webhook_endpoints').orderBy('id').pluck('next_due_at')) as unknown[]).map((value) => (value == null ? null : Number(value)));

  it('when a batch of successes of healthy endpoints is recorded, then it is one statement (no transaction); a batch with a failure is one transaction', async () => {
    for (const id of ENDPOINTS) await state.pending(id, 2);
    const queue = new KnexWebhookDeliveryQueue(state.db.knex);
    const claimed = await queue.claimDue(NOW, slots(8, 2), 60);
    expect(claimed).toHaveLength(8);
    const successes = claimed.slice(0, 4).map(succeededOutcome);
    const recorded = await countQueries(state.db.knex, () => queue.record(successes));
    expect(recorded.queries).toHaveLength(1);
    expect(recorded.queries[0]).toMatch(/^update `webhook_deliveries`/i);

    const failure = answered500Outcome(claimed[4]!, NOW, NOW + 5);
    const mixed = await countQueries(state.db.knex, () => queue.record([...claimed.slice(5).map(succeededOutcome), failure]));
    expect(mixed.queries[0]).toMatch(/^(begin|set transaction|start transaction)/i);
    expect(mixed.queries.at(-1)).toMatch(/^commit/i);

    const rows = await state.db
      .knex('webhook_deliveries')
      .orderBy('id')
      .select<Array<{ id: number; status: string; attempt: number; response_status: number | null }>>('id', 'status', 'attempt', 'response_status');
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    for (const outcome of [...successes, ...claimed.slice(5).map(succeededOutcome)]) expect(byId.get(outcome.deliveryId)?.status).toBe('succeeded');
    expect(byId.get(failure.deliveryId)).toMatchObject({ status: 'failed', response_status: 500 });
    // The failure's retry is a new pending attempt of the same event and endpoint.
    expect(rows.filter((row) => row.status === 'pending' && Number(row.attempt) === 2)).toHaveLength(1);
  });
});

/** Two claims in flight, kept apart by SKIP LOCKED, only on MariaDB (SQLite has one writer: one claim at a time). */
describe('two webhook claims in flight on mariadb', () => {
  const profile: Profile = 'mariadb';
  const state = useClaimDatabase(profile);
  it("when another claim holds an endpoint's oldest attempts, then a claim passes over them and takes the next ones", async () => {
    await state.pending(1, 6);
    const queue = new KnexWebhookDeliveryQueue(state.db.knex);
    expect(queue.claimsInFlight).toBe(2);
    const oldest = (await state.db.knex('webhook_deliveries').where({ endpoint_id: 1 }).orderBy('id').pluck('id')) as number[];
    const other = await state.db.knex.transaction();
    try {
      // As a claim's lease would: the two rows only, by their primary key.
      await other.raw('SELECT id FROM webhook_deliveries FORCE INDEX (PRIMARY) WHERE id IN (?, ?) FOR UPDATE', oldest.slice(0, 2));
      const claimed = await queue.claimDue(NOW, slots(16, 3), 60);
      expect(claimed.map((c) => c.delivery.id)).toEqual(oldest.slice(2, 5));
    } finally {
      await other.rollback();
    }
  });

  it('when two claims run side by side over a backlog, then no attempt is handed out twice and neither exceeds its bounds', async () => {
    for (const id of ENDPOINTS) await state.pending(id, 40);
    const queues = [new KnexWebhookDeliveryQueue(state.db.knex, 0), new KnexWebhookDeliveryQueue(state.db.knex, 0)];
    const seen = new Set<number>();
    for (let round = 0; round < 40 && seen.size < 160; round++) {
      const claims = await Promise.all(queues.map((queue) => queue.claimDue(NOW, slots(12, 3, 5), 60)));
      for (const claimed of claims) {
        expect(claimed.length).toBeLessThanOrEqual(12);
        const perEndpoint = new Map<number, number>();
        const perDirectory = new Map<string, number>();
        for (const c of claimed) {
          perEndpoint.set(c.delivery.endpointId, (perEndpoint.get(c.delivery.endpointId) ?? 0) + 1);
          perDirectory.set(c.directory, (perDirectory.get(c.directory) ?? 0) + 1);
          expect(seen.has(c.delivery.id)).toBe(false);
          seen.add(c.delivery.id);
        }
        expect(Math.max(...perEndpoint.values())).toBeLessThanOrEqual(3);
        expect(Math.max(...perDirectory.values())).toBeLessThanOrEqual(5);
      }
    }
    // Rounds of two claims side by side (one passes over what the other holds) until the whole backlog of 160 is out, each attempt once.
    expect(seen.size).toBe(160);
  });

  it('when the delivering loop claims two at a time, then every attempt is sent once and no endpoint or directory exceeds its bounds', async () => {
    const total = ENDPOINTS.length * 60;
    for (const id of ENDPOINTS) await state.pending(id, 60);
    await state.db.knex('webhook_deliveries').update({ next_attempt_at: Math.floor(Date.now() / 1000) - 60 });
    await state.db.knex('webhook_endpoints').update({ next_due_at: Math.floor(Date.now() / 1000) - 60 });
    const queue = new KnexWebhookDeliveryQueue(state.db.knex);
    const perEndpoint = 2;
    const perDirectory = 3;
    let claimsNow = 0;
    let mostClaims = 0;
    // Claimed and not yet ended, per endpoint and directory: never above twice the bounds (CLAIM_AHEAD).
    const outstanding = new Map<string, number>();
    let mostOutstandingEndpoint = 0;
    let mostOutstandingDirectory = 0;
    const add = (key: string, by: number) => {
      const now = (outstanding.get(key) ?? 0) + by;
      outstanding.set(key, now);
      return now;
    };
    const countingQueue = Object.assign(Object.create(queue) as KnexWebhookDeliveryQueue, {
      claimDue: async (...args: Parameters<KnexWebhookDeliveryQueue['claimDue']>) => {
        claimsNow += 1;
        mostClaims = Math.max(mostClaims, claimsNow);
        try {
          const claimed = await queue.claimDue(...args);
          for (const c of claimed) {
            mostOutstandingEndpoint = Math.max(mostOutstandingEndpoint, add(`e${c.delivery.endpointId}`, 1));
            mostOutstandingDirectory = Math.max(mostOutstandingDirectory, add(`d${c.directory}`, 1));
          }
          return claimed;
        } finally {
          claimsNow -= 1;
        }
      },
    });
    const sent: number[] = [];
    const inFlight = new Map<string, number>();
    let mostInFlightEndpoint = 0;
    let mostInFlightDirectory = 0;
    const deliver = {
      execute: async (claimed: ClaimedDelivery): Promise<DeliveryOutcome> => {
        const endpoint = `e${claimed.delivery.endpointId}`;
        const directory = `d${claimed.directory}`;
        inFlight.set(endpoint, (inFlight.get(endpoint) ?? 0) + 1);
        inFlight.set(directory, (inFlight.get(directory) ?? 0) + 1);
        mostInFlightEndpoint = Math.max(mostInFlightEndpoint, inFlight.get(endpoint)!);
        mostInFlightDirectory = Math.max(mostInFlightDirectory, inFlight.get(directory)!);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight.set(endpoint, inFlight.get(endpoint)! - 1);
        inFlight.set(directory, inFlight.get(directory)! - 1);
        add(endpoint, -1);
        add(directory, -1);
        sent.push(claimed.delivery.id);
        return succeededOutcome(claimed);
      },
    } as unknown as DeliverWebhookUseCase;
    const delivering = startWebhookDelivering({
      deliver,
      queue: countingQueue,
      concurrency: 4,
      perEndpoint,
      perDirectory,
      attemptTimeoutMs: 10_000,
      intervalMs: 50,
      logger: pino({ level: 'silent' }),
    });
    try {
      await vi.waitFor(() => expect(sent.length).toBe(total), { timeout: 30_000, interval: 50 });
    } finally {
      await delivering.stop();
    }
    expect(new Set(sent).size).toBe(total);
    expect(mostClaims).toBe(2);
    expect(mostInFlightEndpoint).toBeLessThanOrEqual(perEndpoint);
    expect(mostInFlightDirectory).toBeLessThanOrEqual(perDirectory);
    expect(mostOutstandingEndpoint).toBeLessThanOrEqual(2 * perEndpoint);
    expect(mostOutstandingDirectory).toBeLessThanOrEqual(2 * perDirectory);
    const statuses = (await state.db.knex('webhook_deliveries').distinct('status').pluck('status')) as string[];
    expect(statuses).toEqual(['succeeded']);
  });
});
