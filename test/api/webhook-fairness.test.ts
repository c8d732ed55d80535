import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPendingDeliveries } from '@logi/adapters';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { DIRS } from '../support/test-fixture.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Fair sharing of webhook deliveries (contract, "Fair sharing between clients"), over HTTP on the profile under test
 * (the API process delivers in the embedded profile, a worker process in production): a slow endpoint with a deep
 * backlog and a running replay holds back no other directory's endpoint, and a replay is not stacked on one still
 * being sent.
 */
let api: TestApi;
let slow: WebhookReceiver;
let fast: WebhookReceiver;

/** Attempts of the slow endpoint already waiting when the test begins: more than a claim once looked at (free slots × 4). */
const BACKLOG = 500;

beforeAll(async () => {
  api = await startTestApi(
    {
      EVENTS_PUBLISH_INTERVAL_MS: '50',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      // Held attempts stay in flight for the whole test, unless released.
      WEBHOOK_TIMEOUT_MS: '30000',
      WEBHOOK_RETRY_SCHEDULE: '1',
    },
    { label: 'webhook-fairness' },
  );
  slow = await WebhookReceiver.start();
  fast = await WebhookReceiver.start();
});

afterAll(async () => {
  await api?.stop();
  await slow?.stop();
  await fast?.stop();
});

function json(method: string, path: string, body: unknown, as: 'baltic' | 'alpine') {
  return api.call(path, { method, as, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
}

async function createEndpoint(url: string, as: 'baltic' | 'alpine'): Promise<{ id: number; secret: string }> {
  const answer = await envelopeOf(await json('POST', '/webhook-endpoints', { url }, as));
  expect(answer.status).toBe(201);
  return answer.data as { id: number; secret: string };
}

describe(`webhook fairness (${PROFILE})`, () => {
  let slowEndpoint: { id: number; secret: string };
  let replayed: number;

  it("when a slow endpoint has a deep backlog and a running replay, then another directory's endpoint gets its event within 2 s of its publication, and a second replay is 409", async () => {
    slow.behaviour = 'hold';
    slowEndpoint = await createEndpoint(slow.url, 'baltic');
    const [{ id: eventId }] = (await api.knex('events').where({ directory: DIRS.baltic }).max({ id: 'id' })) as [{ id: number }];
    const due = Math.floor(Date.now() / 1000) - 3600;
    await addPendingDeliveries(
      api.knex,
      Array.from({ length: BACKLOG }, () => ({
        endpoint_id: slowEndpoint.id,
        event_id: eventId,
        event_type: 'invoice.created',
        attempt: 1,
        status: 'pending' as const,
        created: due,
        next_attempt_at: due,
      })),
    );
    const replay = await envelopeOf(await json('POST', `/webhook-endpoints/${slowEndpoint.id}/replay`, { after: 0 }, 'baltic'));
    expect(replay).toMatchObject({ status: 202, data: { scheduled: expect.any(Number) } });
    replayed = replay.data.scheduled as number;
    expect(replayed).toBeGreaterThan(0);
    // The slow endpoint holds its slots (WEBHOOK_CONCURRENCY_PER_ENDPOINT, 4), each attempt unanswered.
    await slow.waitFor(4);

    const fastEndpoint = await createEndpoint(fast.url, 'alpine');
    const cursor = (await envelopeOf(await api.call('/events?after=0&limit=500', { as: 'alpine' }))).data.next_after as number;
    await api.knex('invoices').where({ id: 9101 }).update({ branch_id: 77 });
    const feed = await envelopeOf(await api.call(`/events?after=${cursor}&wait=10`, { as: 'alpine' }));
    expect(feed.data.events).toHaveLength(1);
    await fast.waitFor(1, 2_000);
    expect(WebhookReceiver.verify(fast.requests[0]!, fastEndpoint.secret).id).toBe(feed.data.events[0].id);
    // Still four in flight to the slow endpoint: its backlog went nowhere else.
    expect(slow.requests).toHaveLength(4);

    const again = await envelopeOf(await json('POST', `/webhook-endpoints/${slowEndpoint.id}/replay`, { after: 0 }, 'baltic'));
    expect(again).toEqual({ status: 409, message: 'A replay of this endpoint is still running.', data: null });
  });

  it('when every event the replay queued has had its first attempt, then a replay is accepted again', async () => {
    slow.behaviour = 'ok';
    slow.release();
    await slow.waitFor(BACKLOG + replayed);
    // Waits on the state the client sees: the earlier replay's first attempts made, the next replay is taken.
    await expect
      .poll(async () => (await json('POST', `/webhook-endpoints/${slowEndpoint.id}/replay`, { after: 0 }, 'baltic')).status, { timeout: 20_000, interval: 100 })
      .toBe(202);
    // Both replays' first attempts, and nothing else carries the mark.
    const marked: Array<{ attempt: unknown }> = await api.knex('webhook_deliveries').where({ endpoint_id: slowEndpoint.id, replay: 1 }).select('attempt');
    expect(marked.map((row) => Number(row.attempt))).toEqual(Array.from({ length: 2 * replayed }, () => 1));
  });
});
