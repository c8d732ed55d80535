import type { Knex } from 'knex';
import { createKnex } from '@logi/adapters';
import { ApiProcess } from './api-process.js';
import type { EventFeedDatabase } from './events-seed.js';
import { log, percentile } from './progress.js';
import { compareThroughput, type ThroughputRow } from './throughput.js';

export const FEED_LIMIT = 100;
/** What the API's retention task reads (KnexEventFeed.removeExpired) with the default EVENTS_RETENTION_DAYS. */
const RETENTION_DAYS = 30;
const RETENTION_BATCH = 5_000;

export interface FeedLatency {
  label: string;
  n: number;
  samples: number;
  p50: number;
  p90: number;
  p99: number;
}

export type ExplainRow = Record<string, string | number | null>;

export interface EventsFeedResults {
  limit: number;
  /** Smallest size first. */
  latency: FeedLatency[];
  throughput: ThroughputRow[];
  /** EXPLAIN of the page's statement on the largest database. */
  explain: ExplainRow[];
  /** The retention task's statement on the largest database, when nothing is old enough to remove. */
  retention: { ms: number; explain: ExplainRow[] };
  /** How long after its start the API on the largest database was busy with that statement. */
  retentionAtStartMs: number;
}

/** Positions in [0, max) from a fixed seed, so the API and the floor get the same cursors. */
function cursors(count: number, max: number, seed: number): number[] {
  let state = seed >>> 0;
  return Array.from({ length: count }, () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * max);
  });
}

function feedPath(after: number): string {
  return `/v1/events?after=${after}&limit=${FEED_LIMIT}`;
}

/**
 * The API runs the retention task at start: with nothing to remove it reads
 * every event. Measuring starts once that statement is gone from the
 * process list (its duration is reported).
 */
async function waitForRetentionScan(knex: Knex, database: string, startedAt: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const deadline = Date.now() + 300_000;
  let lastSeen = 0;
  for (;;) {
    const [rows] = (await knex.raw(
      "SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID() AND info LIKE '%from `events` where `created` <%'",
      [database],
    )) as unknown as [Array<{ n: unknown }>];
    if (Number(rows[0]?.n ?? 0) === 0) return lastSeen ? lastSeen - startedAt : 0;
    lastSeen = Date.now();
    if (Date.now() > deadline) throw new Error(`${database}: the retention statement still runs after 5 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function explain(knex: Knex, sql: string, bindings: unknown[]): Promise<ExplainRow[]> {
  const [rows] = (await knex.raw(`EXPLAIN ${sql}`, bindings as never)) as unknown as [ExplainRow[]];
  return rows.map((row) =>
    Object.fromEntries(Object.entries(row).map(([key, value]) => [key, value === null || typeof value === 'number' ? value : String(value)])),
  );
}

/**
 * Feed pages at each size: p50 of sequential requests (the databases taking
 * turns, each request a random cursor whose page is full), then pages/s
 * against the floor, then EXPLAIN of the page's statement and the cost of
 * the retention task's statement at the largest size.
 */
export async function benchEventFeed(
  feeds: EventFeedDatabase[],
  options: { rounds: number; warmup: number; requests: number; connections: number },
): Promise<EventsFeedResults> {
  const apis = new Map<EventFeedDatabase, ApiProcess>();
  const knexes = new Map<EventFeedDatabase, Knex>();
  const largest = feeds[feeds.length - 1]!;
  let retentionAtStartMs = 0;
  try {
    for (const feed of feeds) {
      knexes.set(feed, createKnex({ databaseUrl: feed.databaseUrl, dataDir: feed.dataDir }));
      log(`${feed.label}: starting the API`);
      const startedAt = Date.now();
      apis.set(feed, await ApiProcess.start(`API on ${feed.label}`, feed.env, { key: feed.apiKey, directory: feed.directory }));
      const busy = await waitForRetentionScan(knexes.get(feed)!, new URL(feed.databaseUrl).pathname.slice(1), startedAt);
      if (feed === largest) retentionAtStartMs = busy;
      if (busy) log(`${feed.label}: the API's retention statement ran until ${(busy / 1000).toFixed(1)} s after its start`);
    }

    // 1. Latency, the sizes taking turns request by request.
    const samples = new Map<EventFeedDatabase, number[]>(feeds.map((feed) => [feed, []]));
    const positions = new Map(feeds.map((feed, i) => [feed, cursors(options.warmup + options.rounds, feed.n - FEED_LIMIT - 1, 1_000 + i)]));
    for (let round = 0; round < options.warmup + options.rounds; round++) {
      for (const feed of feeds) {
        const after = positions.get(feed)![round]!;
        const answer = await apis.get(feed)!.call({ path: feedPath(after) });
        if (answer.status !== 200) throw new Error(`${feed.label} ${feedPath(after)}: status ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
        if (round === 0) {
          const page = JSON.parse(answer.body.toString()) as { data: { events: Array<{ id: number }>; has_more: boolean } };
          if (page.data.events.length !== FEED_LIMIT || page.data.events[0]!.id !== after + 1 || !page.data.has_more) {
            throw new Error(`${feed.label}: the page after ${after} is not ${FEED_LIMIT} events from ${after + 1}`);
          }
        }
        if (round >= options.warmup) samples.get(feed)!.push(answer.ms);
      }
    }
    const latency = feeds.map((feed) => {
      const values = samples.get(feed)!;
      return { label: feed.label, n: feed.n, samples: values.length, p50: percentile(values, 50), p90: percentile(values, 90), p99: percentile(values, 99) };
    });
    for (const row of latency) log(`${row.label}: feed page p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms (${row.samples} requests)`);

    // 2. Pages/s against the floor.
    const throughput: ThroughputRow[] = [];
    for (const [i, feed] of feeds.entries()) {
      const afters = cursors(options.requests, feed.n - FEED_LIMIT - 1, 2_000 + i);
      throughput.push(
        await compareThroughput(
          { label: feed.label, databaseUrl: feed.databaseUrl, dataDir: feed.dataDir, directory: feed.directory },
          apis.get(feed)!,
          {
            name: `GET /v1/events?after=<random>&limit=${FEED_LIMIT}`,
            path: feedPath(Math.floor(feed.n / 2)),
            pathFor: (k) => feedPath(afters[k % afters.length]!),
          },
          { requests: options.requests, connections: options.connections },
        ),
      );
    }

    // 3. The statements at the largest size.
    const knex = knexes.get(largest)!;
    const pageSql = 'SELECT id, type, created, data FROM events WHERE directory = ? AND id > ? ORDER BY id LIMIT ?';
    const pageExplain = await explain(knex, pageSql, [largest.directory, Math.floor(largest.n / 2), FEED_LIMIT + 1]);
    const retentionSql = 'SELECT id, directory FROM events WHERE created < ? ORDER BY id LIMIT ?';
    const createdBefore = Math.floor(Date.now() / 1000) - RETENTION_DAYS * 86_400;
    const started = process.hrtime.bigint();
    await knex.raw(retentionSql, [createdBefore, RETENTION_BATCH]);
    const retentionMs = Number(process.hrtime.bigint() - started) / 1e6;
    log(`${largest.label}: the retention statement with nothing to remove took ${(retentionMs / 1000).toFixed(2)} s`);
    const retentionExplain = await explain(knex, retentionSql, [createdBefore, RETENTION_BATCH]);
    for (const api of apis.values()) api.assertRunning();
    return { limit: FEED_LIMIT, latency, throughput, explain: pageExplain, retention: { ms: retentionMs, explain: retentionExplain }, retentionAtStartMs };
  } finally {
    await Promise.all([...apis.values()].map((api) => api.stop()));
    await Promise.all([...knexes.values()].map((knex) => knex.destroy()));
  }
}
