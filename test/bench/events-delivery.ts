import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { Webhook } from 'standardwebhooks';
import { createKnex, KnexWebhookEndpointRepository, StandardWebhooksSigner } from '@logi/adapters';
import { ApiProcess } from './api-process.js';
import { explain, type ExplainRow } from './events-feed.js';
import { keepAliveAgent, request } from './http.js';
import { log, percentile } from './progress.js';
import { ReceiverProcess, type Counted } from './receiver-process.js';
import type { BenchDatabase } from './seed.js';

/** Endpoints on the receiver: with WEBHOOK_CONCURRENCY_PER_ENDPOINT=4 (default), four fill WEBHOOK_CONCURRENCY=16 (default). */
const ENDPOINTS = 4;
export const DELIVERY_CONCURRENCY = 16;
/** Events delivered to each endpoint per round: the big directory's 2,000 invoices' events. */
const EVENTS_PER_ROUND = 2_000;

export interface LatencySummary {
  samples: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface DeliveryResults {
  endpoints: number;
  concurrency: number;
  /** Deliveries per round (events × endpoints). */
  deliveries: number;
  rounds: number;
  /** Best round of each, deliveries/s at the receiver (first to last receipt). */
  apiPerSecond: number;
  floorPerSecond: number;
  /** The floor without keep-alive: a new connection per POST. */
  floorNewConnectionPerSecond: number;
  ratio: number;
  /** Signatures of the first requests of each API round verified with the endpoints' secrets. */
  verified: number;
  /** One UPDATE at a time, from its commit to the receiver getting the event (ms). */
  commitToReceipt: LatencySummary;
  /** A client waiting in GET /v1/events?wait=30: from the commit to the answer (ms). */
  longPoll: LatencySummary;
  /** The claim statement as knex writes it for KnexWebhookDeliveryQueue, and its plan with the backlog pending. */
  claim: { sql: string; explain: ExplainRow[] };
  /** Server-wide counter deltas over the best API round (other clients of the server included). */
  serverCounters: Record<string, number>;
}

const COUNTERS = ['Com_commit', 'Innodb_data_fsyncs', 'Innodb_row_lock_waits', 'Innodb_row_lock_time'];

async function serverCounters(knex: Knex): Promise<Record<string, number>> {
  const [rows] = (await knex.raw(`SHOW GLOBAL STATUS WHERE Variable_name IN (${COUNTERS.map(() => '?').join(', ')})`, COUNTERS)) as unknown as [
    Array<{ Variable_name: string; Value: unknown }>,
  ];
  return Object.fromEntries(rows.map((row) => [row.Variable_name, Number(row.Value)]));
}

/** KnexWebhookDeliveryQueue.claimDue's locking statement, built the same way: one endpoint's oldest due attempts (ADR 0038; the endpoints are read before it without locks). */
function claimStatement(knex: Knex, now: number, endpointId: number, limit: number): Knex.QueryBuilder {
  return knex
    .from(knex.raw('?? FORCE INDEX (??)', ['webhook_deliveries', 'webhook_deliveries_endpoint_due_index']))
    .select('id', 'endpoint_id', 'event_id', 'event_type', 'attempt')
    .where({ endpoint_id: endpointId, status: 'pending' })
    .andWhere('next_attempt_at', '<=', now)
    .orderBy([{ column: 'next_attempt_at' }, { column: 'id' }])
    .limit(limit)
    .forUpdate()
    .skipLocked();
}

const wallNow = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function summarize(values: number[]): LatencySummary {
  return { samples: values.length, p50: percentile(values, 50), p90: percentile(values, 90), p99: percentile(values, 99), max: Math.max(...values) };
}

function perSecond(counted: Counted): number {
  return (counted.count - 1) / ((counted.last - counted.first) / 1000);
}

interface Endpoint {
  id: number;
  path: string;
  secret: string;
}

interface StoredEvent {
  id: number;
  body: string;
}

/** Each (event, endpoint) POSTed, signed as DeliverWebhookUseCase signs, by `concurrency` loops. */
async function floorRound(receiver: ReceiverProcess, pairs: Array<[StoredEvent, Endpoint]>, keepAlive: boolean): Promise<Counted> {
  const agent = keepAlive ? keepAliveAgent(DELIVERY_CONCURRENCY) : false;
  const counting = receiver.expect(pairs.length, 120_000);
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: DELIVERY_CONCURRENCY }, async () => {
        for (;;) {
          const pair = pairs[next++];
          if (!pair) return;
          const [event, endpoint] = pair;
          const timestamp = Math.floor(Date.now() / 1000);
          const id = String(event.id);
          const headers = {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': new Webhook(endpoint.secret).sign(id, new Date(timestamp * 1000), event.body),
            'content-length': String(Buffer.byteLength(event.body)),
          };
          await new Promise<void>((resolve, reject) => {
            const req = http.request({ host: '127.0.0.1', port: receiver.port, method: 'POST', path: endpoint.path, headers, agent }, (res) => {
              res.resume();
              res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`the receiver answered ${res.statusCode}`))));
            });
            req.on('error', reject);
            req.end(event.body);
          });
        }
      }),
    );
    return await counting.done;
  } finally {
    if (agent) agent.destroy();
  }
}

/**
 * Webhooks from the real API (embedded profile: it delivers) to a receiver
 * in its own process: a backlog of attempts (the directory's last 2,000
 * events for each of 4 endpoints, scheduled at once in one statement, as a
 * replay does) against a bare loop POSTing the same signed bodies at the
 * same concurrency, alternated; then, one write at a time, commit to
 * receipt and commit to the answer of a waiting long poll.
 */
export async function benchDelivery(io: BenchDatabase, options: { rounds: number; samples: number }): Promise<DeliveryResults> {
  const knex = createKnex({ databaseUrl: io.databaseUrl, dataDir: io.dataDir });
  let receiver: ReceiverProcess | null = null;
  let api: ApiProcess | null = null;
  try {
    await clean(knex);
    receiver = await ReceiverProcess.start();
    const repository = new KnexWebhookEndpointRepository(knex);
    const signer = new StandardWebhooksSigner();
    const endpoints: Endpoint[] = [];
    for (let k = 1; k <= ENDPOINTS; k++) {
      const secret = signer.newSecret();
      const created = await repository.create(
        {
          directory: io.directory,
          url: receiver.url(`/hooks/${k}`),
          eventTypes: [],
          description: `bench receiver ${k}`,
          secret,
          created: Math.floor(Date.now() / 1000),
        },
        ENDPOINTS,
      );
      if (!created) throw new Error('could not create the webhook endpoints');
      endpoints.push({ id: created.id, path: `/hooks/${k}`, secret });
    }
    const rows = (await knex('events')
      .select('id', 'type', 'created', 'data')
      .where({ directory: io.directory })
      .orderBy('id', 'desc')
      .limit(EVENTS_PER_ROUND)) as Array<Record<string, unknown>>;
    // The body DeliverWebhookUseCase sends: the event as the feed shows it.
    const events: StoredEvent[] = rows.map((row) => ({
      id: Number(row.id),
      body: JSON.stringify({ id: Number(row.id), type: String(row.type), created: Number(row.created), data: JSON.parse(String(row.data)) as unknown }),
    }));
    const pairs = events.flatMap((event) => endpoints.map((endpoint) => [event, endpoint] as [StoredEvent, Endpoint]));
    log(`events delivery: ${events.length} events × ${ENDPOINTS} endpoints = ${pairs.length} deliveries a round`);

    // The endpoints are one directory's: its bound (8 by default, ADR 0038) would leave half the slots the floor's loops have.
    api = await ApiProcess.start(
      'API on events io',
      { ...io.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_MAX_IN_FLIGHT_PER_DIRECTORY: String(DELIVERY_CONCURRENCY) },
      { key: io.apiKey, directory: io.directory },
    );
    let bestApi = 0;
    let bestFloor = 0;
    let bestFloorNew = 0;
    let verified = 0;
    let claim: DeliveryResults['claim'] = { sql: '', explain: [] };
    let counters: Record<string, number> = {};
    const bySuffix = new Map(endpoints.map((endpoint) => [endpoint.path, endpoint]));
    for (let round = 0; round < options.rounds; round++) {
      const counting = receiver.expect(pairs.length, 300_000);
      const now = Math.floor(Date.now() / 1000);
      const before = await serverCounters(knex);
      await knex.raw(
        'INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempt, status, created, next_attempt_at) ' +
          "SELECT w.id, e.id, e.type, 1, 'pending', ?, ? FROM (SELECT id, type FROM events WHERE directory = ? ORDER BY id DESC LIMIT ?) e " +
          'CROSS JOIN webhook_endpoints w WHERE w.directory = ? ORDER BY e.id DESC, w.id',
        [now, now, io.directory, EVENTS_PER_ROUND, io.directory],
      );
      // As the service's own writers do (addPendingDeliveries): the endpoints' next due time comes forward.
      await knex('webhook_endpoints')
        .where({ directory: io.directory })
        .update({ next_due_at: now, due_version: knex.raw('due_version + 1') });
      if (round === 0) {
        const statement = claimStatement(knex, now, endpoints[0]!.id, 4).toSQL().toNative();
        claim = { sql: claimStatement(knex, now, endpoints[0]!.id, 4).toString(), explain: await explain(knex, statement.sql, [...statement.bindings]) };
      }
      const counted = await counting.done;
      const after = await serverCounters(knex);
      api.assertRunning();
      for (const sample of counted.samples) {
        const endpoint = bySuffix.get(sample.path);
        if (!endpoint) throw new Error(`a webhook came to ${sample.path}`);
        new Webhook(endpoint.secret).verify(sample.body, sample.headers);
        verified += 1;
      }
      await waitUntilRecorded(knex);
      const apiRate = perSecond(counted);
      const floorRate = perSecond(await floorRound(receiver, pairs, true));
      const floorNewRate = perSecond(await floorRound(receiver, pairs, false));
      log(
        `events delivery round ${round + 1}: API ${apiRate.toFixed(0)}/s, floor ${floorRate.toFixed(0)}/s (new connection each: ${floorNewRate.toFixed(0)}/s)`,
      );
      if (apiRate > bestApi) counters = Object.fromEntries(COUNTERS.map((name) => [name, (after[name] ?? 0) - (before[name] ?? 0)]));
      bestApi = Math.max(bestApi, apiRate);
      bestFloor = Math.max(bestFloor, floorRate);
      bestFloorNew = Math.max(bestFloorNew, floorNewRate);
    }

    const invoiceIds = (
      (await knex('invoices')
        .select('id')
        .where({ directory: io.directory })
        .orderBy('id')
        .limit(options.samples * 2)) as Array<{ id: unknown }>
    ).map((row) => Number(row.id));
    // One endpoint for the latency: each event is delivered once.
    await knex('webhook_endpoints').whereNot({ id: endpoints[0]!.id }).update({ enabled: 0 });
    const commitToReceipt = await receiptLatency(knex, receiver, invoiceIds.slice(0, options.samples));
    log(`events delivery: commit to receipt p50 ${commitToReceipt.p50.toFixed(0)} ms, p99 ${commitToReceipt.p99.toFixed(0)} ms`);
    await knex('webhook_endpoints').update({ enabled: 0 });
    const longPoll = await longPollLatency(knex, api, io.directory, invoiceIds.slice(options.samples));
    log(`events delivery: long poll wake-up p50 ${longPoll.p50.toFixed(0)} ms, p99 ${longPoll.p99.toFixed(0)} ms`);
    api.assertRunning();
    return {
      endpoints: ENDPOINTS,
      concurrency: DELIVERY_CONCURRENCY,
      deliveries: pairs.length,
      rounds: options.rounds,
      apiPerSecond: bestApi,
      floorPerSecond: bestFloor,
      floorNewConnectionPerSecond: bestFloorNew,
      ratio: bestApi / bestFloor,
      verified,
      commitToReceipt,
      longPoll,
      claim,
      serverCounters: counters,
    };
  } finally {
    await api?.stop();
    await receiver?.stop();
    await clean(knex).catch((error: unknown) => log(`events delivery: cleaning up failed: ${String(error)}`));
    await knex.destroy();
  }
}

async function clean(knex: Knex): Promise<void> {
  await knex('webhook_deliveries').delete();
  await knex('webhook_endpoints').delete();
}

/** The receiver has every request of a round before the API has recorded the last outcomes: wait for them, and check they succeeded. */
async function waitUntilRecorded(knex: Knex): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows: Array<{ status: string; n: unknown }> = await knex('webhook_deliveries').select('status').count({ n: '*' }).groupBy('status');
    const byStatus = Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
    if (byStatus.failed) throw new Error(`webhook deliveries failed: ${JSON.stringify(byStatus)}`);
    if (!byStatus.pending) return;
    if (Date.now() > deadline) throw new Error(`webhook deliveries still pending: ${JSON.stringify(byStatus)}`);
    await sleep(100);
  }
}

/** A write that changes one field of the list item, committed on its own (autocommit). */
async function touch(knex: Knex, invoiceId: number): Promise<number> {
  await knex('invoices').where({ id: invoiceId }).increment('payment_term', 60);
  return wallNow();
}

/** Between writes, a pause that is random against the publisher's interval. */
function pause(): Promise<unknown> {
  return sleep(100 + Math.random() * 400);
}

async function receiptLatency(knex: Knex, receiver: ReceiverProcess, invoiceIds: number[]): Promise<LatencySummary> {
  receiver.watch(true);
  const values: number[] = [];
  try {
    for (const invoiceId of invoiceIds) {
      const got = receiver.next((message) => {
        const event = JSON.parse(message.body) as { type: string; data: { object: { id: number } } };
        return event.type === 'invoice.updated' && event.data.object.id === invoiceId;
      }, 30_000);
      const committed = await touch(knex, invoiceId);
      values.push((await got).at - committed);
      await pause();
    }
  } finally {
    receiver.watch(false);
  }
  return summarize(values);
}

async function longPollLatency(knex: Knex, api: ApiProcess, directory: string, invoiceIds: number[]): Promise<LatencySummary> {
  const agent = keepAliveAgent(1);
  const values: number[] = [];
  try {
    for (const invoiceId of invoiceIds) {
      const latest = Number(((await knex('events').max({ id: 'id' }).where({ directory }).first()) as { id: unknown }).id ?? 0);
      const answer = request(agent, api.port, { path: `/v1/events?after=${latest}&wait=30`, headers: api.auth, timeoutMs: 40_000 }).then((answer) => ({
        answer,
        at: wallNow(),
      }));
      // The request is waiting in the API before the write.
      await pause();
      const committed = await touch(knex, invoiceId);
      const { answer: got, at } = await answer;
      const page = JSON.parse(got.body.toString()) as { data: { events: Array<{ type: string; data: { object: { id: number } } }> } };
      if (got.status !== 200 || !page.data.events.some((event) => event.type === 'invoice.updated' && event.data.object.id === invoiceId)) {
        throw new Error(`the long poll after ${latest} answered ${got.status} without invoice ${invoiceId}'s event: ${got.body.toString().slice(0, 300)}`);
      }
      values.push(at - committed);
    }
  } finally {
    agent.destroy();
  }
  return summarize(values);
}
