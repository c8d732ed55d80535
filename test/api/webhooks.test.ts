import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Webhook endpoints over HTTP and deliveries to a real receiver on
 * 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE_TARGETS), verified with the
 * standardwebhooks package, on the profile under test (the API process
 * delivers in the embedded profile, a worker process in production).
 */
let api: TestApi;
let receiver: WebhookReceiver;

beforeAll(async () => {
  api = await startTestApi(
    {
      EVENTS_PUBLISH_INTERVAL_MS: '50',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_MAX_ENDPOINTS: '3',
    },
    { label: 'webhooks' },
  );
  receiver = await WebhookReceiver.start();
});

afterAll(async () => {
  await api?.stop();
  await receiver?.stop();
});

afterEach(async () => {
  receiver.behaviour = 'ok';
  for (const endpoint of (await envelopeOf(await api.call('/webhook-endpoints'))).data as Array<{ id: number }>) {
    await api.call(`/webhook-endpoints/${endpoint.id}`, { method: 'DELETE' });
  }
});

function json(method: string, path: string, body: unknown, as: 'baltic' | 'alpine' = 'baltic') {
  return api.call(path, { method, as, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
}

async function createEndpoint(body: Record<string, unknown> = {}) {
  const answer = await envelopeOf(await json('POST', '/webhook-endpoints', { url: receiver.url, ...body }));
  expect(answer.status).toBe(201);
  return answer.data as { id: number; secret: string; url: string; event_types: string[]; enabled: boolean };
}

/**
 * The endpoint's attempts once the newest one is recorded: the receiver sees a
 * request a moment before its answer is read and the attempt recorded.
 */
async function recordedAttempts(endpointId: number): Promise<Array<Record<string, unknown>>> {
  const read = async () => (await envelopeOf(await api.call(`/webhook-endpoints/${endpointId}/deliveries`))).data.deliveries as Array<Record<string, unknown>>;
  await expect.poll(async () => (await read())[0]?.status, { timeout: 10_000, interval: 50 }).not.toBe('pending');
  return read();
}

let nextBranch = 100;
/** A change another system makes in SQL: one invoice.updated. */
async function touchInvoice(id = 9001): Promise<void> {
  nextBranch += 1;
  await api.knex('invoices').where({ id }).update({ branch_id: nextBranch });
}

describe(`webhook endpoints (${PROFILE})`, () => {
  it('when an endpoint is created, then 201 shows its secret once; list and read never show it', async () => {
    const created = await createEndpoint({ event_types: ['invoice.updated', 'invoice.updated'], description: 'ERP mirror' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(created).toMatchObject({ url: receiver.url, event_types: ['invoice.updated'], enabled: true });
    const { secret: _secret, ...shown } = created;
    const listed = await envelopeOf(await api.call('/webhook-endpoints'));
    expect(listed.data).toEqual([shown]);
    expect(Object.keys(listed.data[0]).sort()).toEqual(['created', 'description', 'disabled_reason', 'enabled', 'event_types', 'id', 'url']);
    expect((await envelopeOf(await api.call(`/webhook-endpoints/${created.id}`))).data).toEqual(shown);
    // Another directory's endpoint is missing.
    expect((await api.call(`/webhook-endpoints/${created.id}`, { as: 'alpine' })).status).toBe(404);
    expect((await json('PATCH', `/webhook-endpoints/${created.id}`, { enabled: false }, 'alpine')).status).toBe(404);
  });

  it('when an endpoint is patched and deleted, then it changes and then is gone (404)', async () => {
    const created = await createEndpoint();
    const patched = await envelopeOf(
      await json('PATCH', `/webhook-endpoints/${created.id}`, { description: 'new', event_types: ['order.file_attached'], enabled: false }),
    );
    expect(patched.data).toMatchObject({ description: 'new', event_types: ['order.file_attached'], enabled: false });
    const removed = await envelopeOf(await api.call(`/webhook-endpoints/${created.id}`, { method: 'DELETE' }));
    expect(removed).toEqual({ status: 200, message: 'Webhook endpoint deleted', data: null });
    expect((await api.call(`/webhook-endpoints/${created.id}`)).status).toBe(404);
    expect((await api.call('/webhook-endpoints/abc')).status).toBe(404);
  });

  it.each([
    [{}, 'url'],
    [{ url: 'not a url' }, 'url'],
    [{ url: 'ftp://example.com/x' }, 'url'],
    [{ url: `https://example.com/${'a'.repeat(2048)}` }, 'url'],
    [{ url: 'https://user:pass@example.com/x' }, 'url'],
    [{ url: 'https://example.com/x', event_types: ['invoice.paid'] }, 'event_types'],
    [{ url: 'https://example.com/x', description: 'x'.repeat(256) }, 'description'],
  ])('when the body is %j, then 422 names %s', async (body, field) => {
    const answer = await envelopeOf(await json('POST', '/webhook-endpoints', body));
    expect(answer.status).toBe(422);
    expect(Object.keys(answer.errors ?? {})).toEqual([field]);
  });

  it('when the body is not JSON, then 415 for another type and 400 for JSON that does not parse', async () => {
    const other = await api.call('/webhook-endpoints', { method: 'POST', body: 'url=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect((await envelopeOf(other)).status).toBe(415);
    const broken = await api.call('/webhook-endpoints', { method: 'POST', body: '{"url":', headers: { 'Content-Type': 'application/json' } });
    expect((await envelopeOf(broken)).status).toBe(400);
    const array = await envelopeOf(await json('POST', '/webhook-endpoints', [receiver.url]));
    expect(array.status).toBe(422);
  });

  it('when the directory has WEBHOOK_MAX_ENDPOINTS endpoints, then another is 422', async () => {
    for (let index = 0; index < 3; index += 1) await createEndpoint();
    const answer = await envelopeOf(await json('POST', '/webhook-endpoints', { url: receiver.url }));
    expect(answer).toMatchObject({ status: 422, message: 'A client directory may have at most 3 webhook endpoints.' });
  });
});

describe(`webhook delivery (${PROFILE})`, () => {
  it('when an invoice changes in SQL, then the receiver gets the event, signed per Standard Webhooks, as the feed shows it', async () => {
    const endpoint = await createEndpoint({ event_types: ['invoice.updated'] });
    const before = receiver.requests.length;
    await touchInvoice();
    await receiver.waitFor(before + 1);
    const request = receiver.requests[before]!;
    const event = WebhookReceiver.verify(request, endpoint.secret);
    expect(event.type).toBe('invoice.updated');
    expect(request.headers['webhook-id']).toBe(String(event.id));
    expect(request.headers['content-type']).toBe('application/json');
    const feed = await envelopeOf(await api.call(`/events?after=${event.id - 1}&limit=1`));
    expect(feed.data.events[0]).toEqual(event);
    // The attempt is listed, succeeded.
    const attempts = await recordedAttempts(endpoint.id);
    expect(attempts[0]).toMatchObject({
      event_id: event.id,
      event_type: 'invoice.updated',
      attempt: 1,
      status: 'succeeded',
      response_status: 200,
      error: null,
      next_attempt_at: null,
    });
  });

  it('when the receiver fails, resets and times out for a while, then it gets the event once it recovers, and the attempts say what happened', async () => {
    const endpoint = await createEndpoint({ event_types: ['invoice.updated'] });
    const before = receiver.requests.length;
    receiver.behaviour = 'fail';
    await touchInvoice();
    await receiver.waitFor(before + 1);
    receiver.behaviour = 'reset';
    await receiver.waitFor(before + 2);
    receiver.behaviour = 'ok';
    await receiver.waitFor(before + 3);
    const ids = receiver.requests.slice(before).map((request) => WebhookReceiver.verify(request, endpoint.secret).id);
    expect(new Set(ids).size).toBe(1);
    const attempts = await recordedAttempts(endpoint.id);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.response_status])).toEqual([
      [3, 'succeeded', 200],
      [2, 'failed', null],
      [1, 'failed', 500],
    ]);
    // Coarse reasons for the client (the operator's CLI shows the detail).
    expect(attempts[2]!.error).toBe('answered 500');
    expect(typeof attempts[2]!.next_attempt_at).toBe('number');
    expect(attempts[1]!.error).toBe('connection failed');
    // Pages of attempts, newest first.
    const first = await envelopeOf(await api.call(`/webhook-endpoints/${endpoint.id}/deliveries?limit=2`));
    expect(first.data.has_more).toBe(true);
    const rest = await envelopeOf(await api.call(`/webhook-endpoints/${endpoint.id}/deliveries?limit=2&after=${first.data.next_after}`));
    expect(rest.data.deliveries.map((attempt: { attempt: number }) => attempt.attempt)).toEqual([1]);
  });

  it('when the receiver never answers, then the attempt times out and is tried again', async () => {
    const endpoint = await createEndpoint({ event_types: ['invoice.updated'] });
    const before = receiver.requests.length;
    receiver.behaviour = 'hold';
    await touchInvoice();
    await receiver.waitFor(before + 1);
    receiver.behaviour = 'ok';
    await receiver.waitFor(before + 2);
    const attempts = (await envelopeOf(await api.call(`/webhook-endpoints/${endpoint.id}/deliveries`))).data.deliveries as Array<Record<string, unknown>>;
    expect(attempts.at(-1)).toMatchObject({ attempt: 1, status: 'failed', response_status: null });
    expect(attempts.at(-1)!.error).toBe('timed out');
  });

  it('when the secret is rotated, then deliveries carry two signatures, each valid with its secret', async () => {
    const endpoint = await createEndpoint({ event_types: ['invoice.updated'] });
    const rotated = await envelopeOf(await api.call(`/webhook-endpoints/${endpoint.id}/rotate-secret`, { method: 'POST' }));
    const newSecret = rotated.data.secret as string;
    expect(newSecret).not.toBe(endpoint.secret);
    const before = receiver.requests.length;
    await touchInvoice();
    await receiver.waitFor(before + 1);
    const request = receiver.requests[before]!;
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(WebhookReceiver.verify(request, newSecret).type).toBe('invoice.updated');
    expect(WebhookReceiver.verify(request, endpoint.secret).type).toBe('invoice.updated');
    expect(() => WebhookReceiver.verify(request, 'whsec_' + Buffer.alloc(24, 1).toString('base64'))).toThrow();
  });

  it('when an endpoint is disabled, then nothing is sent to it; re-enabled, later events are; replay sends the missed ones', async () => {
    const endpoint = await createEndpoint({ event_types: ['invoice.updated'] });
    const last = await envelopeOf(await api.call('/events?after=0&limit=500'));
    let cursor = last.data.next_after as number;
    for (;;) {
      const page = await envelopeOf(await api.call(`/events?after=${cursor}&limit=500`));
      if (page.data.events.length === 0) break;
      cursor = page.data.next_after;
    }
    await json('PATCH', `/webhook-endpoints/${endpoint.id}`, { enabled: false });
    const before = receiver.requests.length;
    await touchInvoice(9002);
    // The change is in the feed, and nothing reached the receiver.
    const feed = await envelopeOf(await api.call(`/events?after=${cursor}&wait=10&types=invoice.updated`));
    const missed = feed.data.events[0].id as number;
    expect(receiver.requests.length).toBe(before);
    await json('PATCH', `/webhook-endpoints/${endpoint.id}`, { enabled: true });
    await touchInvoice(9003);
    await receiver.waitFor(before + 1);
    expect(WebhookReceiver.verify(receiver.requests[before]!, endpoint.secret).data.object.id).toBe(9003);
    const replay = await envelopeOf(await json('POST', `/webhook-endpoints/${endpoint.id}/replay`, { after: missed - 1 }));
    expect(replay).toMatchObject({ status: 202, data: { scheduled: 2 } });
    await receiver.waitFor(before + 3);
    const replayed = receiver.requests.slice(before + 1).map((request) => WebhookReceiver.verify(request, endpoint.secret).id);
    expect(replayed.sort()).toEqual([missed, WebhookReceiver.verify(receiver.requests[before]!, endpoint.secret).id].sort());
    expect((await envelopeOf(await json('POST', `/webhook-endpoints/${endpoint.id}/replay`, {}))).errors).toHaveProperty('after');
  });
});
