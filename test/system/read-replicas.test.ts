import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Tokens } from '@logi/api';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import { parseSamples } from '../support/prometheus.js';
import { PrivateReplication, type ReplicatedMariadb } from '../support/private-replication.js';

/**
 * Reads on MariaDB replicas against real replication: a private primary with
 * a binary log and two replicas replicating from it by GTID (their own data
 * directories and ports). The API runs in this process on the primary
 * (DATABASE_URL) with both replicas (DATABASE_READ_URL).
 *
 * Where a read ran is read from the answer itself: each replica's kept
 * invoice counts of one directory are raised by a number of its own, written
 * on that replica only (`invoice_counts` has no triggers, and the test's
 * later writes never touch that directory), so the list's `total` says which
 * database counted it: 1 on the primary, 1001 on replica_1, 2001 on replica_2.
 */

const MAX_LAG_SECONDS = 2;
const DB_QUERY_TIMEOUT_MS = 3_000;
/** docs/operate/database-and-replicas.md: a replica is checked every second, each check bounded by 2 s. */
const CHECK_EVERY_MS = 1_000;
const CHECK_TIMEOUT_MS = 2_000;
/** docs/operate/database-and-replicas.md: a new MariaDB connection gives up after 5 s. */
const CONNECT_TIMEOUT_MS = 5_000;
/** What a loaded 2-core machine adds to a bound. */
const SLACK_MS = 2_000;
/** A replica's change of state is seen by reads within a check's period and bound. */
const SKIPPED_WITHIN_MS = CHECK_EVERY_MS + CHECK_TIMEOUT_MS + SLACK_MS;
/** A read caught on a replica that stops answering: its statement times out, the check confirms, the primary answers; or its new connection times out. */
const READ_WITHIN_MS = Math.max(DB_QUERY_TIMEOUT_MS + CHECK_TIMEOUT_MS, CONNECT_TIMEOUT_MS) + SLACK_MS;

const DATABASE = 'logi_replicated';
const MARKERS: Record<number, string> = { 1: 'primary', 1001: 'replica_1', 2001: 'replica_2' };

let replication: PrivateReplication;
let api: TestApi;
const logLines: Array<Record<string, unknown>> = [];

/** Which database counted the list (see the file's comment), with the answer's status and time. */
async function whereReadsGo(): Promise<{ database: string; status: number; ms: number }> {
  const started = Date.now();
  const response = await api.call('/invoices?types=s&per_page=1', { as: 'alpine' });
  const body = await envelopeOf(response);
  const ms = Date.now() - started;
  if (response.status !== 200) return { database: `none (${response.status})`, status: response.status, ms };
  const total = body.data.pagination.total as number;
  return { database: MARKERS[total] ?? `unknown (total ${total})`, status: response.status, ms };
}

/**
 * Lists until one is counted by one of `databases`; every answer on the way
 * must be a 200 within READ_WITHIN_MS. Gives how long it took, and what each answer was.
 */
async function untilReadsGoTo(databases: string[], withinMs: number): Promise<{ ms: number; seen: string }> {
  const started = Date.now();
  const seen: string[] = [];
  for (;;) {
    const read = await whereReadsGo();
    seen.push(`${read.database} ${read.ms} ms`);
    expect(read.status, seen.join(', ')).toBe(200);
    expect(read.ms, seen.join(', ')).toBeLessThanOrEqual(READ_WITHIN_MS);
    if (databases.includes(read.database)) return { ms: Date.now() - started, seen: seen.join(', ') };
    if (Date.now() - started > withinMs) throw new Error(`reads did not go to ${databases.join(' or ')} within ${withinMs} ms: ${seen.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function ready(): Promise<{ status: number; data: any }> {
  const response = await fetch(`${api.root}/health/ready`);
  const body = await envelopeOf(response);
  return { status: response.status, data: body.data };
}

/** /health/ready's data once each replica's state is as `expected` (rejects after `withinMs`); the API answers 200 throughout. */
async function untilReplicasAre(expected: Record<string, string>, withinMs = SKIPPED_WITHIN_MS + 10_000): Promise<any> {
  const notReady: string[] = [];
  const data = await vi.waitFor(
    async () => {
      const health = await ready();
      if (health.status !== 200) notReady.push(JSON.stringify(health.data));
      const states = Object.fromEntries(Object.entries((health.data.replicas ?? {}) as Record<string, { state: string }>).map(([name, r]) => [name, r.state]));
      if (Object.entries(expected).every(([name, state]) => states[name] === state)) return health.data;
      throw new Error(`replicas not ${JSON.stringify(expected)} within ${withinMs} ms: ${JSON.stringify(health.data)}`);
    },
    { timeout: withinMs, interval: 100 },
  );
  // The API stays ready throughout: a skipped replica never makes it unready.
  expect(notReady).toEqual([]);
  return data;
}

async function metrics(): Promise<ReturnType<typeof parseSamples>> {
  return parseSamples(await api.container.get<{ registry: { metrics(): Promise<string> } }>(Tokens.Metrics).registry.metrics());
}

function value(samples: ReturnType<typeof parseSamples>, name: string, labels: Record<string, string>): number {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0;
}

/** The API's log lines about a replica's state since `from` (an index into logLines), as [replica, state]. */
function stateLines(from: number): Array<[unknown, unknown]> {
  return logLines
    .slice(from)
    .filter((line) => String(line.msg).startsWith('read replica'))
    .map((line) => [line.replica, line.state]);
}

const other = (database: string) => (database === 'replica_1' ? 'replica_2' : 'replica_1');
const replicaOf = (database: string): ReplicatedMariadb => replication.replicas[Number(database.slice(-1)) - 1]!;

beforeAll(async () => {
  replication = await PrivateReplication.start(2);
  await replication.sql(replication.primary, `CREATE DATABASE ${DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  api = await startTestApi(
    {
      DATABASE_URL: replication.primary.url(DATABASE),
      DATABASE_READ_URL: replication.replicas.map((replica) => replica.url(DATABASE)).join(','),
      DB_REPLICA_MAX_LAG_SECONDS: String(MAX_LAG_SECONDS),
      DB_QUERY_TIMEOUT_MS: String(DB_QUERY_TIMEOUT_MS),
    },
    {
      profile: 'embedded',
      logLines,
      // The schema and the test data are written on the primary; the markers on each replica once it has them.
      beforeStart: async () => {
        for (const [i, replica] of replication.replicas.entries()) {
          await replication.untilCaughtUp(replica);
          await replication.sql(replica, `UPDATE ${DATABASE}.invoice_counts SET n = n + ? WHERE directory = 'alpine-logistics' AND type = 's'`, [
            (i + 1) * 1000,
          ]);
        }
      },
    },
  );
  await untilReplicasAre({ replica_1: 'ok', replica_2: 'ok' });
}, 180_000);

afterAll(async () => {
  await api?.stop();
  await replication?.destroy();
}, 60_000);

describe('reads on MariaDB replicas', () => {
  it('when both replicas are healthy, then lists, lookups, the event feed and e-invoices are read on one of them, and nothing falls back', async () => {
    const read = await whereReadsGo();
    expect(['replica_1', 'replica_2']).toContain(read.database);
    const before = await metrics();
    const lookups = [
      await api.call('/orders/by-nr?nr=0001', { as: 'alpine' }),
      await api.call('/events?limit=5', { as: 'alpine' }),
      await api.call('/invoices/9101/e-invoice', { as: 'alpine' }),
    ];
    expect(lookups.map((response) => response.status)).toEqual([200, 200, 200]);
    const after = await metrics();
    // by-nr (1), the feed (retention check and page: 2), the e-invoice (the invoice and its seller: 2).
    expect(
      value(after, 'logistics_db_reads_total', { database: read.database }) - value(before, 'logistics_db_reads_total', { database: read.database }),
    ).toBeGreaterThanOrEqual(5);
    expect(value(after, 'logistics_db_reads_total', { database: 'primary' })).toBe(value(before, 'logistics_db_reads_total', { database: 'primary' }));
    expect(after.filter((s) => s.name === 'logistics_db_read_fallbacks_total').reduce((sum, s) => sum + s.value, 0)).toBe(0);
    expect(value(after, 'logistics_db_replica_healthy', { replica: 'replica_1' })).toBe(1);
    expect(value(after, 'logistics_db_replica_healthy', { replica: 'replica_2' })).toBe(1);
    const health = await ready();
    expect(health.data.degraded).toEqual([]);
    expect(health.data.replicas.replica_1).toEqual({ state: 'ok', lag_seconds: expect.any(Number) });
    expect(health.data.replicas.replica_1.lag_seconds).toBeLessThanOrEqual(MAX_LAG_SECONDS);
  });

  it('when a file is uploaded, then it is written on the primary and replicates to both replicas', async () => {
    const { body, contentType } = multipart([
      { name: 'files', filename: 'replicated.pdf', content: Buffer.concat([PDF_BYTES, Buffer.from('% replicated\n')]) },
    ]);
    const response = await api.call('/orders/4001/files', { as: 'alpine', method: 'POST', body, headers: { 'Content-Type': contentType } });
    expect(response.status).toBe(201);
    const id = (await envelopeOf(response)).data.uploaded[0].id as number;
    const row = `SELECT name FROM ${DATABASE}.order_files WHERE id = ?`;
    expect(await replication.sql(replication.primary, row, [id])).toEqual([{ name: 'replicated.pdf' }]);
    for (const replica of replication.replicas) {
      await replication.untilCaughtUp(replica);
      expect(await replication.sql(replica, row, [id])).toEqual([{ name: 'replicated.pdf' }]);
    }
  });

  it('when the replica in use is paused (SIGSTOP), then reads move to the other within the bound, every list answers 200, and with both paused the primary serves; after SIGCONT they come back', async () => {
    const first = (await whereReadsGo()).database;
    const second = other(first);
    const mark = logLines.length;
    const fallbacksBefore = value(await metrics(), 'logistics_db_read_fallbacks_total', { reason: 'no_healthy_replica' });

    await replicaOf(first).pause();
    try {
      const moved = await untilReadsGoTo([second], SKIPPED_WITHIN_MS);
      console.info(`${first} paused: reads on ${second} after ${moved.ms} ms (${moved.seen})`);
      const health = await untilReplicasAre({ [first]: 'unreachable', [second]: 'ok' });
      expect(health.degraded).toEqual([first]);
      expect(health.checks.database).toBe('ok');

      await replicaOf(second).pause();
      try {
        const fellBack = await untilReadsGoTo(['primary'], SKIPPED_WITHIN_MS);
        console.info(`both paused: reads on the primary after ${fellBack.ms} ms (${fellBack.seen})`);
        await untilReplicasAre({ replica_1: 'unreachable', replica_2: 'unreachable' });
        expect((await ready()).data.degraded).toEqual(['replica_1', 'replica_2']);
        expect((await whereReadsGo()).database).toBe('primary');
        const samples = await metrics();
        expect(value(samples, 'logistics_db_read_fallbacks_total', { reason: 'no_healthy_replica' })).toBeGreaterThan(fallbacksBefore);
        expect(value(samples, 'logistics_db_replica_healthy', { replica: 'replica_1' })).toBe(0);
        expect(value(samples, 'logistics_db_replica_healthy', { replica: 'replica_2' })).toBe(0);
      } finally {
        await replicaOf(second).resume();
      }
    } finally {
      await replicaOf(first).resume();
    }
    const back = await untilReadsGoTo(['replica_1', 'replica_2'], SKIPPED_WITHIN_MS + SLACK_MS);
    console.info(`resumed: reads on a replica again after ${back.ms} ms (${back.seen})`);
    await untilReplicasAre({ replica_1: 'ok', replica_2: 'ok' });
    // One line when each replica went bad and one when it came back, not one per request or per check (a replica
    // that resumes behind the primary may pass through `lagging` on its way back: one line more).
    for (const replica of [first, second]) {
      const states = stateLines(mark)
        .filter(([name]) => name === replica)
        .map(([, state]) => state);
      expect(states[0], replica).toBe('unreachable');
      expect(states.at(-1), replica).toBe('ok');
      expect(states.length, `${replica}: ${states.join(', ')}`).toBeLessThanOrEqual(3);
    }
  }, 120_000);

  it('when the replica in use is killed, then reads move to the other at once, and once it is started again it replicates and is healthy', async () => {
    const first = (await whereReadsGo()).database;
    const index = Number(first.slice(-1)) - 1;
    await replicaOf(first).kill();
    const moved = await untilReadsGoTo([other(first)], SKIPPED_WITHIN_MS);
    console.info(`${first} killed: reads on ${other(first)} after ${moved.ms} ms (${moved.seen})`);
    await untilReplicasAre({ [first]: 'unreachable', [other(first)]: 'ok' });
    const restarted = await replication.restartReplica(index);
    await replication.untilReplicating(restarted);
    await untilReplicasAre({ replica_1: 'ok', replica_2: 'ok' });
    // Reads stay on the replica they moved to while it stays healthy.
    expect((await whereReadsGo()).database).toBe(other(first));
  }, 120_000);

  it('when replicas lag past DB_REPLICA_MAX_LAG_SECONDS (MASTER_DELAY) or stop replicating, then they are skipped and named; once caught up they serve again', async () => {
    const delay = async (replica: ReplicatedMariadb, seconds: number) => {
      await replication.sql(replica, 'STOP SLAVE');
      await replication.sql(replica, `CHANGE MASTER TO MASTER_DELAY = ${seconds}`);
      await replication.sql(replica, 'START SLAVE');
    };
    // A write on the primary that both replicas now hold back for 10 minutes.
    for (const replica of replication.replicas) await delay(replica, 600);
    await replication.sql(replication.primary, `UPDATE ${DATABASE}.orders SET ownnr = 'AL-PO-1-lagged' WHERE id = 4001`);
    const health = await untilReplicasAre({ replica_1: 'lagging', replica_2: 'lagging' }, MAX_LAG_SECONDS * 1000 + SKIPPED_WITHIN_MS + 5_000);
    expect(health.replicas.replica_1.lag_seconds).toBeGreaterThan(MAX_LAG_SECONDS);
    expect(health.degraded).toEqual(['replica_1', 'replica_2']);
    const fellBack = await untilReadsGoTo(['primary'], SKIPPED_WITHIN_MS);
    console.info(
      `both lagging (${health.replicas.replica_1.lag_seconds} s, ${health.replicas.replica_2.lag_seconds} s): reads on the primary (${fellBack.seen})`,
    );
    const samples = await metrics();
    expect(value(samples, 'logistics_db_replica_lag_seconds', { replica: 'replica_2' })).toBeGreaterThan(MAX_LAG_SECONDS);

    // Replica 1 catches up and serves; replica 2's SQL thread is stopped instead (Seconds_Behind_Master NULL).
    await delay(replication.replicas[0]!, 0);
    await replication.untilCaughtUp(replication.replicas[0]!);
    await delay(replication.replicas[1]!, 0);
    await replication.sql(replication.replicas[1]!, 'STOP SLAVE SQL_THREAD');
    await untilReplicasAre({ replica_1: 'ok', replica_2: 'stopped' });
    await untilReadsGoTo(['replica_1'], SKIPPED_WITHIN_MS);
    expect(await replication.sql(replication.replicas[0]!, `SELECT ownnr FROM ${DATABASE}.orders WHERE id = 4001`)).toEqual([{ ownnr: 'AL-PO-1-lagged' }]);

    await replication.sql(replication.replicas[1]!, 'START SLAVE SQL_THREAD');
    await replication.untilCaughtUp(replication.replicas[1]!);
    await untilReplicasAre({ replica_1: 'ok', replica_2: 'ok' });
    const after = await metrics();
    expect(value(after, 'logistics_db_reads_total', { database: 'replica_1' })).toBeGreaterThan(0);
    expect(value(after, 'logistics_db_reads_total', { database: 'replica_2' })).toBeGreaterThan(0);
    expect(value(after, 'logistics_db_read_fallbacks_total', { reason: 'no_healthy_replica' })).toBeGreaterThan(0);
  }, 120_000);
});
