import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import type { ClaimedDelivery, DeliverWebhookUseCase, DeliveryOutcome } from '@logi/domain';
import { addPendingDeliveries, KnexWebhookDeliveryQueue, loadFixtures, Sha256ApiKeyHasher, startWebhookDelivering } from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture, SOUTH } from './knex-repository.fixture.js';
import { succeededOutcome } from '../support/webhook-outcomes.js';

/** An attempt handed to the fake sender, held until the test answers it. */
interface Held {
  claimed: ClaimedDelivery;
  answer: () => void;
}

/** A sender that holds each attempt in `held` until the test answers it, then reports it delivered. */
function holdingDeliver(held: Held[]): DeliverWebhookUseCase {
  return {
    execute: (claimed: ClaimedDelivery) =>
      new Promise<DeliveryOutcome>((resolve) => {
        const outcome = succeededOutcome(claimed);
        held.push({ claimed, answer: () => resolve(outcome) });
      }),
  } as unknown as DeliverWebhookUseCase;
}

/** A first attempt of event 1 to `endpointId`, due since `due`. */
const dueAttempt = (endpointId: number, due: number) => ({
  endpoint_id: endpointId,
  event_id: 1,
  event_type: 'invoice.updated',
  attempt: 1,
  status: 'pending' as const,
  created: due,
  next_attempt_at: due,
});

/**
 * The delivering loop on the real queue, both profiles, with a sender that holds each attempt until told: a client
 * directory never has more than WEBHOOK_MAX_IN_FLIGHT_PER_DIRECTORY attempts in flight from one process, and another
 * directory's attempt still starts.
 */
describe.each(PROFILES)('webhook delivering on %s', (profile) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'webhook_delivering');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    const endpoint = (id: number, directory: string) => ({
      id,
      directory,
      url: `https://hooks.example.com/${id}`,
      event_types: '[]',
      enabled: 1,
      secret: 'whsec_a',
      created: 1,
    });
    await db.knex('webhook_endpoints').insert([endpoint(1, NORTH), endpoint(2, NORTH), endpoint(4, SOUTH)]);
    await db.knex('events').insert({ id: 1, directory: NORTH, type: 'invoice.updated', created: 1, data: JSON.stringify({ object: { id: 1 } }) });
  });

  afterAll(async () => {
    await db?.drop();
  });

  it("when a directory's endpoints have more due attempts than its bound, then it has its bound in flight and no more, and another directory's attempt starts", async () => {
    const due = Math.floor(Date.now() / 1000) - 60;
    const attempt = (endpointId: number) => dueAttempt(endpointId, due);
    await addPendingDeliveries(db.knex, [...Array.from({ length: 5 }, () => attempt(1)), ...Array.from({ length: 5 }, () => attempt(2))]);
    const held: Held[] = [];
    const deliver = holdingDeliver(held);
    const inFlight = (directory: string) => held.filter((item) => item.claimed.directory === directory).length;
    const delivering = startWebhookDelivering({
      deliver,
      queue: new KnexWebhookDeliveryQueue(db.knex),
      concurrency: 16,
      perEndpoint: 4,
      perDirectory: 3,
      attemptTimeoutMs: 10_000,
      intervalMs: 20,
      logger: pino({ level: 'silent' }),
    });
    try {
      await vi.waitFor(() => expect(inFlight(NORTH)).toBe(3), { timeout: 5_000, interval: 10 });
      // Both of its endpoints share the bound.
      expect(new Set(held.map((item) => item.claimed.delivery.endpointId)).size).toBe(2);
      await addPendingDeliveries(db.knex, [attempt(4)]);
      await vi.waitFor(() => expect(inFlight(SOUTH)).toBe(1), { timeout: 5_000, interval: 10 });
      expect(inFlight(NORTH)).toBe(3);
      // One answered: the next of the directory takes its place, and the bound holds.
      const first = held.shift()!;
      first.answer();
      await vi.waitFor(() => expect(inFlight(NORTH)).toBe(3), { timeout: 5_000, interval: 10 });
      expect(held.some((item) => item.claimed.delivery.id === first.claimed.delivery.id)).toBe(false);
    } finally {
      const stopping = delivering.stop();
      for (const item of held.splice(0)) item.answer();
      await stopping;
      // Nothing starts once stopping (not even what a claim under way brought): it was given back.
      expect(held).toEqual([]);
    }
  });

  it('when attempts are claimed ahead of the slots, then one starts as soon as a slot frees, and stop() gives back the unsent ones at once and records the sent', async () => {
    await db.knex('webhook_deliveries').delete();
    const due = Math.floor(Date.now() / 1000) - 60;
    await addPendingDeliveries(
      db.knex,
      Array.from({ length: 3 }, () => dueAttempt(4, due)),
    );
    const ids = ((await db.knex('webhook_deliveries').select('id').orderBy('id')) as Array<{ id: unknown }>).map((row) => Number(row.id));
    const held: Held[] = [];
    const deliver = holdingDeliver(held);
    const delivering = startWebhookDelivering({
      deliver,
      queue: new KnexWebhookDeliveryQueue(db.knex),
      concurrency: 1,
      perEndpoint: 1,
      perDirectory: 1,
      attemptTimeoutMs: 10_000,
      intervalMs: 60_000,
      logger: pino({ level: 'silent' }),
    });
    const leased = async () =>
      (
        (await db
          .knex('webhook_deliveries')
          .select('id')
          .where('status', 'pending')
          .andWhere('next_attempt_at', '>', due + 60)) as Array<{ id: number }>
      )
        .map((row) => Number(row.id))
        .sort((a, b) => a - b);
    // Delivery is not ordered (docs/integrate/events-and-webhooks.md): on MariaDB two claims run side by side, and
    // either may end first, so which of the attempts comes first is not asserted, only that each is sent once.
    const sent: number[] = [];
    try {
      // One in flight, one more claimed (twice the one slot), the third left due.
      await vi.waitFor(() => expect(held).toHaveLength(1), { timeout: 5_000, interval: 10 });
      sent.push(held[0]!.claimed.delivery.id);
      // The claim ahead may still be on its way when the first attempt is handed over: its lease is waited for.
      let claimedFirst: number[] = [];
      await vi.waitFor(
        async () => {
          claimedFirst = await leased();
          expect(claimedFirst).toHaveLength(2);
        },
        { timeout: 5_000, interval: 10 },
      );
      expect(claimedFirst).toContain(sent[0]);
      held[0]!.answer();
      // The one claimed ahead starts at once (no claim in between: the interval is a minute).
      await vi.waitFor(() => expect(held).toHaveLength(2), { timeout: 5_000, interval: 10 });
      sent.push(held[1]!.claimed.delivery.id);
      expect([...sent].sort((a, b) => a - b)).toEqual(claimedFirst);
    } finally {
      const stopping = delivering.stop();
      for (const item of held.splice(0)) item.answer();
      await stopping;
      for (const item of held.splice(0)) item.answer();
    }
    const rows = (await db.knex('webhook_deliveries').select('id', 'status', 'next_attempt_at').orderBy('id')) as Array<Record<string, unknown>>;
    const now = Math.floor(Date.now() / 1000);
    const third = ids.find((id) => !sent.includes(id));
    expect(rows.map((row) => [Number(row.id), row.status])).toEqual(ids.map((id) => [id, id === third ? 'pending' : 'succeeded']));
    // The third was claimed ahead once the second started, and given back by stop(): due now, not at its lease's end.
    expect(Number(rows.find((row) => Number(row.id) === third)!.next_attempt_at)).toBeLessThanOrEqual(now);
  });
});
