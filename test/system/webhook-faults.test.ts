import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { PrivateRedis } from '../support/private-services.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Webhook delivery through faults of the production profile: a worker
 * killed while an attempt is in flight, and Redis gone and restarted.
 * Deliveries live in the database, so neither loses an event.
 */
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await receiver?.stop();
});
afterEach(() => {
  receiver.behaviour = 'ok';
});

const WEBHOOK_ENV = { EVENTS_PUBLISH_INTERVAL_MS: '50', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1' };

async function createEndpoint(api: TestApi): Promise<{ id: number; secret: string }> {
  const response = await api.call('/webhook-endpoints', {
    method: 'POST',
    body: JSON.stringify({ url: receiver.url, event_types: ['invoice.updated'] }),
    headers: { 'Content-Type': 'application/json' },
  });
  const answer = await envelopeOf(response);
  expect(answer.status).toBe(201);
  return answer.data;
}

describe('when a worker is killed while its webhook attempt is in flight', () => {
  let api: TestApi;
  beforeAll(async () => {
    // A 3 s attempt leases its claim for 11 s (twice the timeout, for a wait for a slot, + 5 s): the receiver holds the request, the worker dies inside it.
    api = await startTestApi({ ...WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: '3000' }, { profile: 'production', label: 'hookkill' });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('then another worker delivers the event once the lease ends, and the attempt is recorded as succeeded', async () => {
    const endpoint = await createEndpoint(api);
    const before = receiver.requests.length;
    receiver.behaviour = 'hold';
    await api.knex('invoices').where({ id: 9001 }).update({ branch_id: 31 });
    await receiver.waitFor(before + 1);
    await api.stack!.workers[0]!.kill();
    receiver.behaviour = 'ok';
    await api.stack!.startWorker(api.dataDir, WEBHOOK_ENV);
    await receiver.waitFor(before + 2, 30_000);
    const [held, delivered] = receiver.requests.slice(before, before + 2).map((request) => WebhookReceiver.verify(request, endpoint.secret));
    expect(delivered!.id).toBe(held!.id);
    expect(delivered!.data.object.branch_id).toBe(31);
    // The attempt is recorded once the receiver's answer is read, a moment after the receiver saw the request.
    const attempts = async () =>
      ((await envelopeOf(await api.call(`/webhook-endpoints/${endpoint.id}/deliveries`))).data.deliveries as Array<{ attempt: number; status: string }>).map(
        (attempt) => [attempt.attempt, attempt.status],
      );
    await expect.poll(attempts, { timeout: 10_000, interval: 100 }).toEqual([[1, 'succeeded']]);
  });
});

describe('when Redis is gone and comes back', () => {
  let api: TestApi;
  let redis: PrivateRedis;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    api = await startTestApi({ ...WEBHOOK_ENV, REDIS_URL: redis.url }, { profile: 'production', label: 'hookredis' });
  });
  afterAll(async () => {
    await api?.stop();
    await redis?.kill();
  });

  it('then events are published and delivered while it is down and after it restarts, none lost', async () => {
    const endpoint = await createEndpoint(api);
    const before = receiver.requests.length;
    await redis.kill();
    await api.knex('invoices').where({ id: 9002 }).update({ branch_id: 41 });
    await receiver.waitFor(before + 1);
    redis = await PrivateRedis.start(redis.port);
    await api.knex('invoices').where({ id: 9003 }).update({ branch_id: 42 });
    await receiver.waitFor(before + 2);
    const events = receiver.requests.slice(before).map((request) => WebhookReceiver.verify(request, endpoint.secret));
    expect(events.map((event) => [event.data.object.id, event.data.object.branch_id])).toEqual([
      [9002, 41],
      [9003, 42],
    ]);
    // The feed has both, and the API answers lists again with Redis back (the rate limiter reconnects).
    await expect.poll(async () => (await api.call('/invoices?per_page=1')).status, { timeout: 20_000, interval: 250 }).toBe(200);
  });
});
