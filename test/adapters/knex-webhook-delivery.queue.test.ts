import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KnexWebhookDeliveryQueue, loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture } from './knex-repository.fixture.js';

const NOW = 1_800_000_000;

/** The attempts table as a queue, on both profiles: slots per endpoint, leases, retries, retention. */
describe.each(PROFILES)('KnexWebhookDeliveryQueue on %s', (profile) => {
  let db: TestDatabase;
  let queue: KnexWebhookDeliveryQueue;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'webhook_queue');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    queue = new KnexWebhookDeliveryQueue(db.knex);
    const endpoint = (id: number, enabled = 1) => ({
      id,
      directory: NORTH,
      url: `https://hooks.example.com/${id}`,
      event_types: '[]',
      enabled,
      secret: 'whsec_a',
      created: NOW,
    });
    await db.knex('webhook_endpoints').insert([endpoint(1), endpoint(2), endpoint(3, 0)]);
    await db.knex('events').insert({ id: 1, directory: NORTH, type: 'invoice.updated', created: NOW, data: JSON.stringify({ object: { id: 101 } }) });
  });

  afterAll(async () => {
    await db?.drop();
  });

  beforeEach(async () => {
    await db.knex('webhook_deliveries').delete();
  });

  const pending = (endpointId: number, count: number, due = NOW) =>
    db.knex('webhook_deliveries').insert(
      Array.from({ length: count }, () => ({
        endpoint_id: endpointId,
        event_id: 1,
        event_type: 'invoice.updated',
        attempt: 1,
        status: 'pending',
        created: NOW,
        next_attempt_at: due,
      })),
    );

  it('when attempts are due, then a claim takes at most the free slots of each endpoint, none of a disabled one, none not yet due', async () => {
    await pending(1, 5);
    await pending(2, 1);
    await pending(2, 1, NOW + 60);
    await pending(3, 2);
    const claimed = await queue.claimDue(NOW, 10, (endpointId) => (endpointId === 1 ? 2 : 4), 30);
    expect(claimed.map((item) => item.delivery.endpointId).sort()).toEqual([1, 1, 2]);
    // The disabled endpoint's attempts failed when they came due; nothing is sent to it.
    expect(await db.knex('webhook_deliveries').select('status', 'error').where({ endpoint_id: 3 })).toEqual([
      { status: 'failed', error: 'The endpoint is disabled: not sent (replay it once enabled).' },
      { status: 'failed', error: 'The endpoint is disabled: not sent (replay it once enabled).' },
    ]);
    expect(claimed[0]!.event).toEqual({ id: 1, type: 'invoice.updated', created: NOW, data: { object: { id: 101 } } });
    expect(claimed[0]!.secrets).toEqual({ current: 'whsec_a', previous: null, previousUntil: null });
  });

  it("when a claim holds a lease, then another claim does not take the same attempts until the lease ends (a dead process's attempt is taken again)", async () => {
    await pending(1, 3);
    const first = await queue.claimDue(NOW, 3, () => 10, 30);
    expect(first).toHaveLength(3);
    expect(await queue.claimDue(NOW + 10, 3, () => 10, 30)).toEqual([]);
    const again = await queue.claimDue(NOW + 31, 3, () => 10, 30);
    expect(again.map((item) => item.delivery.id).sort()).toEqual(first.map((item) => item.delivery.id).sort());
  });

  it('when a failure is recorded with a retry, then the attempt is failed and the next one is pending at its time; success clears the streak', async () => {
    await pending(1, 1);
    const [claimed] = await queue.claimDue(NOW, 1, () => 1, 30);
    await queue.record([
      {
        deliveryId: claimed!.delivery.id,
        endpointId: 1,
        succeeded: false,
        responseStatus: 500,
        error: 'The endpoint answered 500.',
        retryAt: NOW + 5,
        failingSince: NOW,
        disableReason: null,
        now: NOW,
        endpointWasFailing: false,
      },
    ]);
    const rows = await db.knex('webhook_deliveries').select('attempt', 'status', 'response_status', 'next_attempt_at').orderBy('id');
    expect(rows).toEqual([
      { attempt: 1, status: 'failed', response_status: 500, next_attempt_at: NOW + 5 },
      { attempt: 2, status: 'pending', response_status: null, next_attempt_at: NOW + 5 },
    ]);
    expect((await db.knex('webhook_endpoints').select('failing_since').where({ id: 1 }).first()).failing_since).toBe(NOW);
    expect(await queue.claimDue(NOW + 4, 1, () => 1, 30)).toEqual([]);
    const [retry] = await queue.claimDue(NOW + 5, 1, () => 1, 30);
    expect(retry!.failingSince).toBe(NOW);
    await queue.record([
      {
        deliveryId: retry!.delivery.id,
        endpointId: 1,
        succeeded: true,
        responseStatus: 204,
        error: null,
        retryAt: null,
        failingSince: null,
        disableReason: null,
        now: NOW + 5,
        endpointWasFailing: true,
      },
    ]);
    expect((await db.knex('webhook_endpoints').select('failing_since').where({ id: 1 }).first()).failing_since).toBeNull();
  });

  it('when a failure disables the endpoint, then it is disabled with the reason and its attempts are no longer claimed', async () => {
    await pending(2, 2);
    const [claimed] = await queue.claimDue(NOW, 1, () => 1, 30);
    await queue.record([
      {
        deliveryId: claimed!.delivery.id,
        endpointId: 2,
        succeeded: false,
        responseStatus: null,
        error: 'connection refused',
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
    expect(await queue.claimDue(NOW + 100, 5, () => 5, 30)).toEqual([]);
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
});
