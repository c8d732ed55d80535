import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DeliverySlotBounds } from '@logi/domain';
import {
  addPendingDeliveries,
  createKnex,
  KnexWebhookDeliveryQueue,
  KnexWebhookEndpointRepository,
  KnexWebhookTargetPolicy,
  loadFixtures,
  Sha256ApiKeyHasher,
} from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture, SOUTH } from './knex-repository.fixture.js';
import { answered500Outcome, succeededOutcome } from '../support/webhook-outcomes.js';

const NOW = 1_800_000_000;

/** A claim's bounds: `limit` free slots, an endpoint's free slots as given, and no directory bound unless one is given. */
function slots(limit: number, endpointSlots: (endpointId: number) => number, directorySlots: (directory: string) => number = () => limit): DeliverySlotBounds {
  return { limit, endpointSlots, directorySlots };
}

/** The attempts table as a queue, on both profiles: slots per endpoint and directory shared fairly, leases, retries, retention, replays. */
describe.each(PROFILES)('KnexWebhookDeliveryQueue on %s', (profile) => {
  let db: TestDatabase;
  let queue: KnexWebhookDeliveryQueue;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'webhook_queue');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    queue = new KnexWebhookDeliveryQueue(db.knex);
    const endpoint = (id: number, enabled = 1, directory = NORTH) => ({
      id,
      directory,
      url: `https://hooks.example.com/${id}`,
      event_types: '[]',
      enabled,
      secret: 'whsec_a',
      created: NOW,
    });
    await db.knex('webhook_endpoints').insert([endpoint(1), endpoint(2), endpoint(3, 0), endpoint(4, 1, SOUTH), endpoint(5), endpoint(6)]);
    const event = (id: number) => ({ id, directory: NORTH, type: 'invoice.updated', created: NOW, data: JSON.stringify({ object: { id: 100 + id } }) });
    await db.knex('events').insert([event(1), event(2)]);
  });

  afterAll(async () => {
    await db?.drop();
  });

  beforeEach(async () => {
    await db.knex('webhook_deliveries').delete();
  });

  const pending = async (endpointId: number, count: number, due = NOW, replay = 0) => {
    for (let done = 0; done < count; done += 500) await insertPending(endpointId, Math.min(500, count - done), due, replay);
  };
  const insertPending = (endpointId: number, count: number, due: number, replay: number) =>
    addPendingDeliveries(
      db.knex,
      Array.from({ length: count }, () => ({
        replay,
        endpoint_id: endpointId,
        event_id: 1,
        event_type: 'invoice.updated',
        attempt: 1,
        status: 'pending' as const,
        created: NOW,
        next_attempt_at: due,
      })),
    );

  it('when attempts are due, then a claim takes at most the free slots of each endpoint, none of a disabled one, none not yet due', async () => {
    await pending(1, 5);
    await pending(2, 1);
    await pending(2, 1, NOW + 60);
    await pending(3, 2);
    const claimed = await queue.claimDue(
      NOW,
      slots(10, (endpointId) => (endpointId === 1 ? 2 : 4)),
      30,
    );
    expect(claimed.map((item) => item.delivery.endpointId).sort()).toEqual([1, 1, 2]);
    // The disabled endpoint's attempts failed when they came due; nothing is sent to it.
    expect(await db.knex('webhook_deliveries').select('status', 'error').where({ endpoint_id: 3 })).toEqual([
      { status: 'failed', error: 'The endpoint is disabled: not sent (replay it once enabled).' },
      { status: 'failed', error: 'The endpoint is disabled: not sent (replay it once enabled).' },
    ]);
    expect(claimed[0]!.event).toEqual({ id: 1, type: 'invoice.updated', created: NOW, data: { object: { id: 101 } } });
    expect(claimed[0]!.secrets).toEqual({ current: 'whsec_a', previous: null, previousUntil: null });
  });

  it("when one directory is allowed private targets, then its claimed attempts say so and the other directory's do not", async () => {
    const policy = new KnexWebhookTargetPolicy(db.knex);
    expect(await policy.allow(SOUTH, NOW)).toBe(true);
    expect(await policy.allow(SOUTH, NOW)).toBe(false);
    try {
      await pending(1, 1);
      await pending(4, 1);
      const claimed = await queue.claimDue(
        NOW,
        slots(10, () => 4),
        30,
      );
      expect(Object.fromEntries(claimed.map((item) => [item.directory, item.privateTargetsAllowed]))).toEqual({ [NORTH]: false, [SOUTH]: true });
      expect([await policy.allowsPrivateTargets(SOUTH), await policy.allowsPrivateTargets(NORTH)]).toEqual([true, false]);
      expect(await policy.list()).toEqual([{ directory: SOUTH, allowedAt: NOW }]);
    } finally {
      expect(await policy.deny(SOUTH)).toBe(true);
    }
    expect(await policy.deny(SOUTH)).toBe(false);
  });

  it("when a claim holds a lease, then another claim does not take the same attempts until the lease ends (a dead process's attempt is taken again)", async () => {
    await pending(1, 3);
    const first = await queue.claimDue(
      NOW,
      slots(3, () => 10),
      30,
    );
    expect(first).toHaveLength(3);
    expect(
      await queue.claimDue(
        NOW + 10,
        slots(3, () => 10),
        30,
      ),
    ).toEqual([]);
    const again = await queue.claimDue(
      NOW + 31,
      slots(3, () => 10),
      30,
    );
    expect(again.map((item) => item.delivery.id).sort()).toEqual(first.map((item) => item.delivery.id).sort());
  });

  it('when a failure is recorded with a retry, then the attempt is failed and the next one is pending at its time; success clears the streak', async () => {
    await pending(1, 1);
    const [claimed] = await queue.claimDue(
      NOW,
      slots(1, () => 1),
      30,
    );
    await queue.record([answered500Outcome(claimed!, NOW, NOW + 5)]);
    const rows = await db.knex('webhook_deliveries').select('attempt', 'status', 'response_status', 'error', 'error_detail', 'next_attempt_at').orderBy('id');
    expect(rows).toEqual([
      { attempt: 1, status: 'failed', response_status: 500, error: 'answered 500', error_detail: 'The endpoint answered 500.', next_attempt_at: NOW + 5 },
      { attempt: 2, status: 'pending', response_status: null, error: null, error_detail: null, next_attempt_at: NOW + 5 },
    ]);
    expect((await db.knex('webhook_endpoints').select('failing_since').where({ id: 1 }).first()).failing_since).toBe(NOW);
    expect(
      await queue.claimDue(
        NOW + 4,
        slots(1, () => 1),
        30,
      ),
    ).toEqual([]);
    const [retry] = await queue.claimDue(
      NOW + 5,
      slots(1, () => 1),
      30,
    );
    expect(retry!.failingSince).toBe(NOW);
    // The endpoint's first success after its failure.
    await queue.record([{ ...succeededOutcome(retry!), now: NOW + 5, endpointWasFailing: true }]);
    expect((await db.knex('webhook_endpoints').select('failing_since').where({ id: 1 }).first()).failing_since).toBeNull();
  });

  it('when a failure disables the endpoint, then it is disabled with the reason and its attempts are no longer claimed', async () => {
    await pending(2, 2);
    const [claimed] = await queue.claimDue(
      NOW,
      slots(1, () => 1),
      30,
    );
    await queue.record([
      {
        deliveryId: claimed!.delivery.id,
        endpointId: 2,
        succeeded: false,
        responseStatus: null,
        error: 'connection failed',
        errorDetail: 'connection refused',
        retryAt: null,
        failingSince: NOW - 500_000,
        disableReason: 'Disabled.',
        now: NOW,
        endpointWasFailing: true,
      },
    ]);
    expect(await db.knex('webhook_endpoints').select('enabled', 'disabled_reason').where({ id: 2 }).first()).toEqual({
      enabled: 0,
      disabled_reason: 'Disabled.',
    });
    expect(
      await queue.claimDue(
        NOW + 100,
        slots(5, () => 5),
        30,
      ),
    ).toEqual([]);
    await db.knex('webhook_endpoints').where({ id: 2 }).update({ enabled: 1, disabled_reason: null });
  });

  it('when finished attempts are older than the retention, then they are removed, and pending ones stay', async () => {
    await pending(1, 2);
    const oldest = (await db.knex('webhook_deliveries').min({ id: 'id' }).first()) as { id: number };
    await db
      .knex('webhook_deliveries')
      .where('id', oldest.id)
      .update({ status: 'succeeded', created: NOW - 100 });
    expect(await queue.removeFinished(NOW - 50, 10)).toBe(1);
    expect(await queue.removeFinished(NOW - 50, 10)).toBe(0);
    expect((await db.knex('webhook_deliveries').select('status')).map((row) => row.status)).toEqual(['pending']);
  });

  const claimedOf = (claimed: Array<{ delivery: { endpointId: number } }>) => claimed.map((item) => item.delivery.endpointId).sort((a, b) => a - b);

  it("when an endpoint without a free slot owns the oldest backlog (its own and replayed attempts), then another directory's due attempts are claimed at once", async () => {
    await pending(1, 1_000, NOW - 600);
    await pending(1, 300, NOW - 300, 1);
    await pending(4, 2);
    const slow = (endpointId: number) => (endpointId === 1 ? 0 : 4);
    const claimed = await queue.claimDue(NOW, slots(4, slow), 30);
    expect(claimedOf(claimed)).toEqual([4, 4]);
    expect(claimed.map((item) => item.directory)).toEqual([SOUTH, SOUTH]);
    // With one slot free again, the slow endpoint takes its oldest attempt, and only that one.
    await pending(4, 1);
    const next = await queue.claimDue(
      NOW,
      slots(4, (endpointId) => (endpointId === 1 ? 1 : 4)),
      30,
    );
    expect(claimedOf(next)).toEqual([1, 4]);
    const oldest = (await db.knex('webhook_deliveries').where({ endpoint_id: 1 }).min({ id: 'id' }).first()) as { id: number };
    expect(next.find((item) => item.delivery.endpointId === 1)!.delivery.id).toBe(Number(oldest.id));
  });

  it('when a directory has many endpoints with older due attempts, then it does not take every free slot: directories take turns, and its endpoints too', async () => {
    for (const endpointId of [1, 2, 5, 6]) await pending(endpointId, 4, NOW - 60);
    await pending(4, 4);
    const claimed = await queue.claimDue(
      NOW,
      slots(4, () => 4),
      30,
    );
    expect(claimed.filter((item) => item.directory === SOUTH)).toHaveLength(2);
    const north = claimed.filter((item) => item.directory === NORTH).map((item) => item.delivery.endpointId);
    expect(north).toHaveLength(2);
    expect(new Set(north).size).toBe(2);
  });

  it('when a directory has no free slot left, then none of its attempts are claimed; within its bound, its endpoints share it', async () => {
    await pending(1, 3);
    await pending(2, 3);
    await pending(4, 3);
    const bounded = (free: number) => (directory: string) => (directory === NORTH ? free : 10);
    expect(
      claimedOf(
        await queue.claimDue(
          NOW,
          slots(10, () => 4, bounded(0)),
          30,
        ),
      ),
    ).toEqual([4, 4, 4]);
    expect(
      claimedOf(
        await queue.claimDue(
          NOW,
          slots(10, () => 4, bounded(2)),
          30,
        ),
      ),
    ).toEqual([1, 2]);
  });

  it('when several processes claim at once (MariaDB: pools of their own), then each attempt is taken by one of them, and each within its bounds', async () => {
    for (const endpointId of [1, 2, 4, 5, 6]) await pending(endpointId, 40, NOW - 10);
    // SQLite is one delivering process (the embedded API): its claims share one connection.
    const others = profile === 'mariadb' ? [0, 1, 2].map(() => createKnex({ databaseUrl: db.databaseUrl, dataDir: db.dataDir })) : [];
    try {
      const queues = [queue, ...(others.length > 0 ? others.map((knex) => new KnexWebhookDeliveryQueue(knex)) : [queue, queue, queue])];
      const rounds = await Promise.all(
        queues.map((each) =>
          each.claimDue(
            NOW,
            slots(
              8,
              () => 2,
              () => 4,
            ),
            30,
          ),
        ),
      );
      const ids = rounds.flat().map((item) => item.delivery.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeGreaterThanOrEqual(8);
      for (const claimed of rounds) {
        expect(claimed.length).toBeLessThanOrEqual(8);
        const perEndpoint = new Map<number, number>();
        for (const item of claimed) perEndpoint.set(item.delivery.endpointId, (perEndpoint.get(item.delivery.endpointId) ?? 0) + 1);
        expect(Math.max(...perEndpoint.values())).toBeLessThanOrEqual(2);
        expect(claimed.filter((item) => item.directory === NORTH).length).toBeLessThanOrEqual(4);
      }
      const leased = (await db
        .knex('webhook_deliveries')
        .where('next_attempt_at', NOW + 30)
        .count({ n: '*' })
        .first()) as { n: unknown };
      expect(Number(leased.n)).toBe(ids.length);
    } finally {
      await Promise.all(others.map((knex) => knex.destroy()));
    }
  });

  it('when a replay is still being sent, then another replay of the endpoint is refused until every event it queued had its first attempt (retries do not count)', async () => {
    const endpoints = new KnexWebhookEndpointRepository(db.knex);
    // Two at once (MariaDB: two connections): one begins, the other finds it running.
    const both = await Promise.all([endpoints.replay(NORTH, 1, 0, NOW), endpoints.replay(NORTH, 1, 0, NOW)]);
    expect([...both].sort()).toEqual([2, 'running']);
    expect(await endpoints.replay(NORTH, 1, 0, NOW)).toBe('running');
    // Another endpoint's replay is its own; another directory's endpoint is not found.
    expect(await endpoints.replay(NORTH, 2, 0, NOW)).toBe(2);
    expect(await endpoints.replay(SOUTH, 1, 0, NOW)).toBe(0);
    const attempts = await queue.claimDue(
      NOW,
      slots(4, (endpointId) => (endpointId === 1 ? 4 : 0)),
      30,
    );
    expect(claimedOf(attempts)).toEqual([1, 1]);
    const outcome = (deliveryId: number, succeeded: boolean) => ({
      deliveryId,
      endpointId: 1,
      succeeded,
      responseStatus: succeeded ? 200 : 500,
      error: succeeded ? null : 'answered 500',
      errorDetail: succeeded ? null : 'The endpoint answered 500.',
      retryAt: succeeded ? null : NOW + 5,
      failingSince: succeeded ? null : NOW,
      disableReason: null,
      now: NOW,
      endpointWasFailing: false,
    });
    await queue.record([outcome(attempts[0]!.delivery.id, true)]);
    expect(await endpoints.replay(NORTH, 1, 0, NOW)).toBe('running');
    await queue.record([outcome(attempts[1]!.delivery.id, false)]);
    // The failed one's retry is pending, and does not hold the replay.
    expect(await db.knex('webhook_deliveries').where({ endpoint_id: 1, status: 'pending' }).select('attempt')).toEqual([{ attempt: 2 }]);
    expect(await endpoints.replay(NORTH, 1, 0, NOW)).toBe(2);
    await db.knex('webhook_endpoints').update({ failing_since: null });
  });
});
