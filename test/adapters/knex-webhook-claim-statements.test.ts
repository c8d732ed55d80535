import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DeliverySlotBounds } from '@logi/domain';
import { addPendingDeliveries, KnexWebhookDeliveryQueue, loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { countQueries, openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture, SOUTH } from './knex-repository.fixture.js';

const NOW = 1_800_000_000;
const ENDPOINTS = [1, 2, 3, 4];

/** A claim's bounds: `limit` free slots, `perEndpoint` for each endpoint, `perDirectory` for each directory. */
function slots(limit: number, perEndpoint: number, perDirectory = limit): DeliverySlotBounds {
  return { limit, endpointSlots: () => perEndpoint, directorySlots: () => perDirectory };
}

/** What one claim costs in statements, and claims in flight side by side (ADR 0038, "Set-based claims"). */
describe.each(PROFILES)('webhook claims, set-based, on %s', (profile) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'webhook_claim_sql');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    await db.knex('webhook_endpoints').insert(
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
    await db.knex('events').insert({ id: 1, directory: NORTH, type: 'invoice.updated', created: NOW, data: JSON.stringify({ object: { id: 101 } }) });
  });

  afterAll(async () => {
    await db?.drop();
  });

  beforeEach(async () => {
    await db.knex('webhook_deliveries').delete();
    await db.knex('webhook_endpoints').update({ next_due_at: null });
  });

  const pending = (endpointId: number, count: number) =>
    addPendingDeliveries(
      db.knex,
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

  it('when four endpoints have due attempts, then a claim of all four is at most 9 statements (8 on SQLite), however many endpoints it reads', async () => {
    for (const id of ENDPOINTS) await pending(id, 5);
    const queue = new KnexWebhookDeliveryQueue(db.knex);
    // The first claim of a process reads every endpoint (a full pass): the one counted is an ordinary one after it.
    expect(await queue.claimDue(NOW, slots(4, 1), 60)).toHaveLength(4);
    const { result, queries } = await countQueries(db.knex, () => queue.claimDue(NOW, slots(16, 4), 60));
    expect(result).toHaveLength(16);
    expect(new Set(result.map((claimed) => claimed.delivery.endpointId))).toEqual(new Set(ENDPOINTS));
    // Was 15 on MariaDB and 14 on SQLite: a locking read per endpoint and a next-due write per endpoint. Now the
    // transaction (and on MariaDB its isolation level), the endpoints due, one locking read, the lease, the endpoints'
    // oldest pending, one next-due write and the events.
    expect(queries.filter((sql) => /^select .* for update skip locked/i.test(sql) || /^select \* from \(select/i.test(sql) || /^\(select/i.test(sql))).toHaveLength(1);
    expect(queries.filter((sql) => /^update `webhook_endpoints`/i.test(sql))).toHaveLength(1);
    expect(queries.length).toBe(profile === 'mariadb' ? 9 : 8);
  });
});
