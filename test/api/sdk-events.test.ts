import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Tokens } from '@logi/api';
import {
  ApiError,
  createClient,
  EventsExpiredError,
  verifyWebhook,
  WebhookVerificationError,
  type ClientOptions,
  type Event,
  type EventPage,
  type LogiClient,
  type RetryEvent,
} from '@logi/client';
import type { EventFeedPort } from '@logi/domain';
import { PROFILE, startTestApi, type Tenant, type TestApi } from '../support/api-harness.js';
import { DIRS, KEYS } from '../support/test-fixture.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The SDK's change feed (`events.list`, `events.follow`), webhook endpoint
 * calls and `verifyWebhook`, against the real API on the profile under test
 * and a webhook receiver on 127.0.0.1. Every wait is on a state (a request
 * in flight, an event yielded, a delivery received), never on a time.
 */
let api: TestApi;
let receiver: WebhookReceiver;
let sdk: LogiClient;

beforeAll(async () => {
  api = await startTestApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', EVENTS_PUBLISH_INTERVAL_MS: '50' }, { label: 'sdk-events' });
  receiver = await WebhookReceiver.start();
  sdk = clientFor('baltic').client;
});

afterAll(async () => {
  await api?.stop();
  await receiver?.stop();
});

afterEach(async () => {
  for (const tenant of ['baltic', 'alpine'] as const) {
    const client = clientFor(tenant).client;
    for (const endpoint of await client.webhooks.list()) await client.webhooks.delete(endpoint.id);
  }
});

/** Conditions re-checked whenever something observed changes; `until` resolves once one holds. */
class States {
  private waiters: Array<{ holds: () => boolean; resolve: () => void }> = [];

  changed(): void {
    this.waiters = this.waiters.filter((waiter) => (waiter.holds() ? (waiter.resolve(), false) : true));
  }

  until(holds: () => boolean, what: string, ms = 20_000): Promise<void> {
    if (holds()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        holds,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((other) => other !== waiter);
        reject(new Error(`not within ${ms} ms: ${what}`));
      }, ms);
      this.waiters.push(waiter);
    });
  }
}

const states = new States();

interface ObservedRequest {
  url: URL;
  pending: boolean;
  status?: number;
  aborted?: boolean;
  /** The feed page a 200 of GET /events answered. */
  page?: EventPage;
}

/** Answers a request in place of the server (a 503, say), or undefined to let it through. */
type Stand = (request: Request) => Response | undefined;

/** The SDK as one of the fixture's clients, every request it sends observed (and, with `stand`, some answered by the test). */
function clientFor(tenant: Tenant, options: Partial<ClientOptions> = {}, stand?: Stand) {
  const requests: ObservedRequest[] = [];
  const observed: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const record: ObservedRequest = { url: new URL(request.url), pending: true };
    requests.push(record);
    states.changed();
    try {
      const response = stand?.(request) ?? (await fetch(request));
      record.status = response.status;
      if (response.status === 200 && record.url.pathname.endsWith('/events')) record.page = ((await response.clone().json()) as { data: EventPage }).data;
      return response;
    } catch (error) {
      record.aborted = request.signal.aborted;
      throw error;
    } finally {
      record.pending = false;
      states.changed();
    }
  };
  const client = createClient({ baseUrl: api.base, token: KEYS[tenant], clientDirectory: DIRS[tenant], fetch: observed, ...options });
  return { client, requests };
}

/** Iterates `stream` in the background: `seen` grows with each event, `done` settles when the loop ends. */
function consume(stream: AsyncIterable<Event>) {
  const seen: Event[] = [];
  const done = (async () => {
    for await (const event of stream) {
      seen.push(event);
      states.changed();
    }
  })();
  const ended = { value: false };
  void done.then(
    () => ((ended.value = true), states.changed()),
    () => ((ended.value = true), states.changed()),
  );
  return { seen, done, ended };
}

const query = (request: ObservedRequest, name: string) => request.url.searchParams.get(name);
const serviceUnavailable = (retryAfter: string) =>
  Response.json({ status: 503, message: 'Service Unavailable', data: null }, { status: 503, headers: { 'Retry-After': retryAfter } });

/** Reads the feed until `count` events are there (long polls: the fixture's events may still be on their way in production). */
async function feedHolds(client: LogiClient, count: number): Promise<Event[]> {
  const events: Event[] = [];
  while (events.length < count) {
    const page = await client.events.list({ after: events.at(-1)?.id ?? 0, limit: 500, wait: 5 });
    events.push(...page.events);
  }
  return events;
}

describe(`the SDK follows the change feed (${PROFILE})`, () => {
  it("when following from the start, then it yields the fixture's invoice.created events, then a change made in SQL while it waits, in order, and ends on abort", async () => {
    const { client, requests } = clientFor('baltic');
    const invoices = (await client.invoices.list({ per_page: 500, sort_by: 'nr', sort_dir: 'asc' })).invoices;
    await feedHolds(client, invoices.length);
    const branchBefore = invoices.find((invoice) => invoice.id === 9001)!.branch_id;
    requests.length = 0;

    const stop = new AbortController();
    const stream = client.events.follow({ limit: 4, signal: stop.signal });
    expect(stream.cursor).toBe(0);
    const { seen, done, ended } = consume(stream);
    const longPollPast = (id: number) => () =>
      requests.some((request) => request.pending && query(request, 'after') === String(id) && query(request, 'wait') === '30');
    await states.until(() => seen.length >= invoices.length && longPollPast(seen.at(-1)!.id)(), 'follow() long-polls past the fixture events');

    expect(seen.map((event) => event.type)).toEqual(invoices.map(() => 'invoice.created'));
    expect(seen.map((event) => event.data.object.id).sort()).toEqual(invoices.map((invoice) => invoice.id).sort());
    expect(stream.cursor).toBe(seen.at(-1)!.id);

    await api.knex('invoices').where({ id: 9001 }).update({ branch_id: 77 });
    await states.until(() => seen.length > invoices.length, 'the SQL change is yielded');
    const change = seen[invoices.length]!;
    expect(change).toMatchObject({ type: 'invoice.updated', data: { object: { id: 9001, branch_id: 77 }, previous_attributes: { branch_id: branchBefore } } });
    const ids = seen.map((event) => event.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(stream.cursor).toBe(change.id);

    // Asked at once while has_more, long-polled otherwise, always from the last next_after.
    await states.until(longPollPast(change.id), 'follow() long-polls past the change');
    expect(requests[0]!.url.search).toBe('?after=0&limit=4&wait=30');
    for (const [index, request] of requests.entries()) {
      if (index === 0) continue;
      const previous = requests[index - 1]!.page!;
      expect([query(request, 'after'), query(request, 'wait')]).toEqual([String(previous.next_after), previous.has_more ? '0' : '30']);
    }
    expect(requests.some((request) => request.page?.has_more)).toBe(true);

    const sent = requests.length;
    stop.abort();
    await expect(done).resolves.toBeUndefined();
    expect(ended.value).toBe(true);
    expect(requests.at(-1)).toMatchObject({ pending: false, aborted: true });
    expect(requests).toHaveLength(sent);
    expect(seen).toHaveLength(invoices.length + 1);
  });

  it('when resumed from a saved cursor with types, then only later events of those types come', async () => {
    const all = await feedHolds(sdk, 10);
    const stop = new AbortController();
    const stream = sdk.events.follow({ after: all[2]!.id, types: ['invoice.updated'], wait: 1, signal: stop.signal });
    const { seen, done } = consume(stream);
    await states.until(() => seen.length >= 1, 'the update is yielded');
    stop.abort();
    await done;
    expect(seen.map((event) => [event.type, event.data.object.id])).toEqual([['invoice.updated', 9001]]);
  });

  it('when a 503 comes and the client has retry, then it asks again and the loop goes on; without retry the loop throws the ApiError', async () => {
    const retries: RetryEvent[] = [];
    let refused = 0;
    const { client } = clientFor('baltic', { retry: { attempts: 3, onRetry: (event) => retries.push(event) } }, () =>
      refused++ === 0 ? serviceUnavailable('0') : undefined,
    );
    const stop = new AbortController();
    const { seen, done } = consume(client.events.follow({ types: ['invoice.created'], signal: stop.signal }));
    await states.until(() => seen.length >= 9, 'the events come after the retry');
    stop.abort();
    await done;
    expect(retries).toEqual([expect.objectContaining({ status: 503, attempt: 1, waitSeconds: 0 })]);

    const plain = clientFor('baltic', {}, () => serviceUnavailable('0')).client;
    const error = await firstFailure(plain.events.follow());
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(EventsExpiredError);
    expect(error).toMatchObject({ status: 503, retryAfterSeconds: 0 });
  });

  it('when aborted while the retry waits out a Retry-After, then the loop ends at once (the wait is cancelled, not left running)', async () => {
    const retries: RetryEvent[] = [];
    const { client, requests } = clientFor('baltic', { retry: { attempts: 3, onRetry: (event) => (retries.push(event), states.changed()) } }, () =>
      serviceUnavailable('20'),
    );
    const stop = new AbortController();
    const { done, ended } = consume(client.events.follow({ signal: stop.signal }));
    await states.until(() => retries.length === 1, 'the retry is waiting');
    const aborted = Date.now();
    stop.abort();
    await states.until(() => ended.value, 'the loop ends', 5_000);
    await expect(done).resolves.toBeUndefined();
    expect(Date.now() - aborted).toBeLessThan(5_000);
    expect(requests).toHaveLength(1);
  });

  it('when wait is outside 1..30, then follow refuses it at once', () => {
    expect(() => sdk.events.follow({ wait: 0 })).toThrow(RangeError);
    expect(() => sdk.events.follow({ wait: 31 })).toThrow(RangeError);
  });

  it('when retention removed events past the cursor, then list, follow and replay throw EventsExpiredError; a later cursor still reads', async () => {
    const alpine = clientFor('alpine').client;
    const [oldest] = await feedHolds(alpine, 1);
    await api.knex('events').where({ id: oldest!.id }).update({ created: 1 });
    // The housekeeping's retention step, run now.
    expect(await api.container.get<EventFeedPort>(Tokens.EventFeed).removeExpired(1_000, 100)).toBe(1);

    const error = await firstFailure(alpine.events.follow({ after: 0 }));
    expect(error).toBeInstanceOf(EventsExpiredError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: 'EventsExpiredError', status: 410, message: 'Events after this cursor are no longer kept.', data: null });
    await expect(alpine.events.list({ after: 0 })).rejects.toBeInstanceOf(EventsExpiredError);
    const endpoint = await alpine.webhooks.create({ url: receiver.url });
    await expect(alpine.webhooks.replay(endpoint.id, { after: 0 })).rejects.toMatchObject({ name: 'EventsExpiredError', status: 410 });
    expect(await alpine.events.list({ after: oldest!.id })).toEqual({ events: [], has_more: false, next_after: oldest!.id });
  });
});

/** What the first step of an iteration rejects with. */
async function firstFailure(stream: AsyncIterable<Event>): Promise<unknown> {
  const iterator = stream[Symbol.asyncIterator]();
  return iterator.next().then(
    (result) => {
      throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
    },
    (error: unknown) => error,
  );
}

describe(`the SDK manages webhook endpoints (${PROFILE})`, () => {
  it("when an endpoint is created, read, listed, patched, rotated and deleted, then each call returns the envelope's data", async () => {
    const created = await sdk.webhooks.create({ url: receiver.url, event_types: ['invoice.updated'], description: 'ERP mirror' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const { secret, ...endpoint } = created;
    expect(endpoint).toMatchObject({ url: receiver.url, event_types: ['invoice.updated'], description: 'ERP mirror', enabled: true, disabled_reason: null });
    expect(await sdk.webhooks.list()).toEqual([endpoint]);
    expect(await sdk.webhooks.get(created.id)).toEqual(endpoint);

    const paused = await sdk.webhooks.update(created.id, { description: 'paused', event_types: [], enabled: false });
    expect(paused).toEqual({ ...endpoint, description: 'paused', event_types: [], enabled: false });
    expect(await sdk.webhooks.update(created.id, { enabled: true })).toEqual({ ...paused, enabled: true });

    const rotated = await sdk.webhooks.rotateSecret(created.id);
    expect(rotated).toEqual({ secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.secret).not.toBe(secret);
    expect(await sdk.webhooks.deliveries(created.id, { limit: 10 })).toEqual({ deliveries: [], has_more: false, next_after: null });

    await expect(sdk.webhooks.delete(created.id)).resolves.toBeUndefined();
    await expect(sdk.webhooks.get(created.id)).rejects.toMatchObject({ name: 'ApiError', status: 404, message: 'Webhook endpoint not found' });
    await expect(sdk.webhooks.delete(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('when the body is refused, then the ApiError is a 422 naming the field', async () => {
    await expect(sdk.webhooks.create({ url: 'ftp://example.com/hooks' })).rejects.toMatchObject({ status: 422, errors: { url: [expect.any(String)] } });
    await expect(sdk.webhooks.create({ url: receiver.url, event_types: ['invoice.paid' as 'invoice.created'] })).rejects.toMatchObject({
      status: 422,
      errors: { event_types: [expect.any(String)] },
    });
  });

  it("when another client's endpoint is asked for, then 404", async () => {
    const endpoint = await sdk.webhooks.create({ url: receiver.url });
    const alpine = clientFor('alpine').client;
    await expect(alpine.webhooks.get(endpoint.id)).rejects.toMatchObject({ status: 404 });
    await expect(alpine.webhooks.update(endpoint.id, { enabled: false })).rejects.toMatchObject({ status: 404 });
  });
});

let nextBranch = 200;
/** A change another system makes in SQL (one invoice.updated), and the request it makes the receiver get. */
async function deliveredChange(invoiceId = 9002) {
  const before = receiver.requests.length;
  nextBranch += 1;
  await api.knex('invoices').where({ id: invoiceId }).update({ branch_id: nextBranch });
  await receiver.waitFor(before + 1);
  return { request: receiver.requests[before]!, branchId: nextBranch };
}

describe(`verifyWebhook (${PROFILE})`, () => {
  it('when a delivery arrives as sent, then it returns the typed event (from a string or a Buffer, node or fetch headers); the attempt is listed and replay sends it again', async () => {
    const endpoint = await sdk.webhooks.create({ url: receiver.url, event_types: ['invoice.updated'] });
    const { request, branchId } = await deliveredChange();
    const event = verifyWebhook(request.body, request.headers, endpoint.secret);
    expect(event.id).toBe(Number(request.headers['webhook-id']));
    if (event.type !== 'invoice.updated') throw new Error(`unexpected ${event.type}`);
    // Narrowed by type: the updated invoice and what changed.
    expect(event.data.object).toMatchObject({ id: 9002, branch_id: branchId });
    expect(Object.keys(event.data.previous_attributes)).toEqual(['branch_id']);
    expect(await sdk.events.list({ after: event.id - 1, limit: 1 })).toMatchObject({ events: [event] });

    const fetchHeaders = new Headers();
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') fetchHeaders.set(name, value);
    expect(verifyWebhook(Buffer.from(request.body), fetchHeaders, endpoint.secret)).toEqual(event);

    const { deliveries } = await sdk.webhooks.deliveries(endpoint.id);
    expect(deliveries[0]).toMatchObject({ event_id: event.id, event_type: 'invoice.updated', attempt: 1 });
    expect(['pending', 'succeeded']).toContain(deliveries[0]!.status);

    const before = receiver.requests.length;
    expect(await sdk.webhooks.replay(endpoint.id, { after: event.id - 1 })).toEqual({ scheduled: 1 });
    await receiver.waitFor(before + 1);
    expect(verifyWebhook(receiver.requests[before]!.body, receiver.requests[before]!.headers, endpoint.secret)).toEqual(event);
  });

  it('when the body is tampered with, the secret is another, a header is missing or the timestamp is old, then WebhookVerificationError', async () => {
    const endpoint = await sdk.webhooks.create({ url: receiver.url, event_types: ['invoice.updated'] });
    const { request } = await deliveredChange();
    const refusal = (call: () => unknown) => {
      try {
        call();
      } catch (error) {
        expect(error).toBeInstanceOf(WebhookVerificationError);
        return (error as Error).message;
      }
      throw new Error('verifyWebhook accepted it');
    };
    const tampered = request.body.replace('"invoice.updated"', '"invoice.deleted"');
    expect(tampered).not.toBe(request.body);
    expect(refusal(() => verifyWebhook(tampered, request.headers, endpoint.secret))).toBe('No matching signature found');
    const otherSecret = `whsec_${randomBytes(24).toString('base64')}`;
    expect(refusal(() => verifyWebhook(request.body, request.headers, otherSecret))).toBe('No matching signature found');
    expect(refusal(() => verifyWebhook(request.body, { ...request.headers, 'webhook-signature': undefined }, endpoint.secret))).toBe(
      'Missing required headers',
    );

    // Signed with the right secret, but ten minutes ago: a replayed request.
    const id = String(request.headers['webhook-id']);
    const tenMinutesAgo = new Date(Date.now() - 600_000);
    const oldHeaders = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(tenMinutesAgo.getTime() / 1000)),
      'webhook-signature': new Webhook(endpoint.secret).sign(id, tenMinutesAgo, request.body),
    };
    expect(refusal(() => verifyWebhook(request.body, oldHeaders, endpoint.secret))).toBe('Message timestamp too old');

    // Signed with the right secret, but not an event.
    const now = new Date();
    const notEvent = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(endpoint.secret).sign(id, now, '[1]'),
    };
    expect(refusal(() => verifyWebhook('[1]', notEvent, endpoint.secret))).toBe('The signed payload is not an event');
  });

  it('when the secret was rotated, then a delivery verifies with the old and with the new secret', async () => {
    const endpoint = await sdk.webhooks.create({ url: receiver.url, event_types: ['invoice.updated'] });
    const { secret: newSecret } = await sdk.webhooks.rotateSecret(endpoint.id);
    const { request } = await deliveredChange(9003);
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const withNew = verifyWebhook(request.body, request.headers, newSecret);
    expect(withNew).toMatchObject({ type: 'invoice.updated', data: { object: { id: 9003 } } });
    expect(verifyWebhook(request.body, request.headers, endpoint.secret)).toEqual(withNew);
  });
});
