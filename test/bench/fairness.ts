/**
 * The fairness part (issue 25, `pnpm bench:fairness`): one ordinary tenant
 * alone, then the same ordinary load while an abusive tenant, on the same
 * API and worker, keeps a burst of distinct-variant PDF requests in flight,
 * has a webhook endpoint at a slow receiver with a replayed backlog, and
 * holds more long polls than `EVENTS_MAX_WAITING`. Production profile:
 * MariaDB (a fresh database of its own, dropped after), Redis (a queue
 * prefix of its own), s3rver, one API process and one worker process.
 *
 * The abusive tenant's refusals (409 on a replay while one runs, 429 on a
 * long poll over the cap) are counted, never taken for a failure: the code
 * before those limits simply accepts everything.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { createKnex } from '@logi/adapters';
import { ApiProcess } from './api-process.js';
import { parseSize, WORK_DIR, type BenchConfig } from './config.js';
import { keepAliveAgent, request, type HttpAnswer, type HttpRequest } from './http.js';
import { deleteRedisKeys, redisAnswers, startS3, startWorker } from './io-stack.js';
import { stopChild } from './processes.js';
import { log, percentile } from './progress.js';
import { ReceiverProcess } from './receiver-process.js';
import { BIG_DIRECTORY, BIG_KEY, SMALL_DIRECTORY, SMALL_KEY } from './seed-data.js';
import { prepareMariadb } from './seed.js';

export const FAIRNESS_DATABASE = 'logi_bench_fairness';
/** The abusive tenant's receiver answers every POST this long after it arrived. */
export const SLOW_RECEIVER_MS = 3_000;
/** The abusive tenant asks for another replay of its whole backlog this often. */
const REPLAY_EVERY_MS = 5_000;
/** The abuse runs this long before the ordinary load starts (queues filled, backlog claimed). */
const SETTLE_MS = 5_000;
/** After its last write, the ordinary tenant's missing webhooks are waited for this long more. */
const STRAGGLERS_MS = 15_000;
const LANGS = ['cs', 'de', 'en', 'pl', 'ro', 'tr'] as const;

export interface Summary {
  samples: number;
  p50: number;
  p95: number;
  max: number;
}

export interface OrdinaryResults {
  /** `GET /v1/invoices/{id}/pdf?lang=pl`, one at a time, each another invoice (every one rendered). */
  pdf: Summary & { failed: Record<string, number> };
  /** One UPDATE of one invoice at a time (autocommit), from its commit to the receiver getting its `invoice.updated`. */
  webhook: Summary & { writes: number; received: number; missing: number; missingWaitedMs: number | null };
  /** The ordinary tenant's own long poll (one at a time, `wait=30`), beside: its answers and refusals. */
  longPoll: { answered: number; refused: number; other: number };
  seconds: number;
}

export interface AbusiveResults {
  inFlight: number;
  /** `p50Ms`: the served PDFs' latency (request to last byte). */
  pdf: { served: number; p50Ms: number; other: Record<string, number>; distinctVariants: number };
  replays: { accepted: number; refused: number; other: number; scheduled: number };
  longPolls: { held: number; answered: number; refused: number; other: number };
  /** The abusive endpoint's attempts when the phase ended. */
  webhooks: { delivered: number; pending: number };
}

export interface FairnessResults {
  at: string;
  loadAverage: number[];
  settings: {
    invoices: { ordinary: number; abusive: number };
    pdfsPerPhase: number;
    writesPerPhase: number;
    burst: number;
    longPolls: number;
    slowReceiverMs: number;
    replayEveryMs: number;
  };
  alone: OrdinaryResults;
  abuse: OrdinaryResults & { abusive: AbusiveResults };
}

interface Tenant {
  name: string;
  directory: string;
  headers: Record<string, string>;
}

const ORDINARY: Tenant = {
  name: 'ordinary',
  directory: SMALL_DIRECTORY,
  headers: { Authorization: `Bearer ${SMALL_KEY}`, 'X-Client-Directory': SMALL_DIRECTORY },
};
const ABUSIVE: Tenant = { name: 'abusive', directory: BIG_DIRECTORY, headers: { Authorization: `Bearer ${BIG_KEY}`, 'X-Client-Directory': BIG_DIRECTORY } };

const wallNow = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function summarize(values: number[]): Summary {
  return { samples: values.length, p50: percentile(values, 50), p95: percentile(values, 95), max: values.length ? Math.max(...values) : NaN };
}

function bump(counts: Record<string, number>, key: string | number): void {
  counts[String(key)] = (counts[String(key)] ?? 0) + 1;
}

function json(body: unknown): Pick<HttpRequest, 'body' | 'headers'> {
  return { body: Buffer.from(JSON.stringify(body)), headers: { 'Content-Type': 'application/json' } };
}

class Stack {
  constructor(
    readonly api: ApiProcess,
    readonly knex: Knex,
    readonly fast: ReceiverProcess,
    readonly slow: ReceiverProcess,
  ) {}

  call(agent: http.Agent, tenant: Tenant, req: HttpRequest): Promise<HttpAnswer> {
    return request(agent, this.api.port, { ...req, headers: { ...tenant.headers, ...req.headers } });
  }

  async lastEventId(tenant: Tenant): Promise<number> {
    const row = (await this.knex('events').max({ id: 'id' }).where({ directory: tenant.directory }).first()) as { id: unknown } | undefined;
    return Number(row?.id ?? 0);
  }

  async createEndpoint(tenant: Tenant, url: string): Promise<number> {
    const agent = keepAliveAgent(1);
    try {
      const answer = await this.call(agent, tenant, {
        method: 'POST',
        path: '/v1/webhook-endpoints',
        ...json({ url, description: `fairness bench (${tenant.name})` }),
      });
      if (answer.status !== 201)
        throw new Error(`POST /v1/webhook-endpoints (${tenant.name}) answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
      return Number((JSON.parse(answer.body.toString()) as { data: { id: number } }).data.id);
    } finally {
      agent.destroy();
    }
  }
}

/**
 * Long polls of one tenant, `count` at once, each asked again when answered
 * (after a second when refused, as `Retry-After: 1` says), until stopped.
 */
function holdLongPolls(
  stack: Stack,
  tenant: Tenant,
  count: number,
  after: number,
): { stop: () => Promise<void>; counts: { answered: number; refused: number; other: number } } {
  const counts = { answered: 0, refused: 0, other: 0 };
  const agent = keepAliveAgent(count);
  let stopped = false;
  const loops = Array.from({ length: count }, async () => {
    let cursor = after;
    while (!stopped) {
      try {
        const answer = await stack.call(agent, tenant, { path: `/v1/events?after=${cursor}&wait=30`, timeoutMs: 45_000 });
        if (stopped) return;
        if (answer.status === 200) {
          counts.answered += 1;
          cursor = (JSON.parse(answer.body.toString()) as { data: { next_after: number } }).data.next_after;
        } else if (answer.status === 429) {
          counts.refused += 1;
          await sleep(Number(answer.headers['retry-after'] ?? 1) * 1000);
        } else {
          counts.other += 1;
          await sleep(1_000);
        }
      } catch {
        if (stopped) return;
        counts.other += 1;
        await sleep(1_000);
      }
    }
  });
  return {
    counts,
    stop: async () => {
      stopped = true;
      agent.destroy();
      await Promise.race([Promise.all(loops), sleep(5_000)]);
    },
  };
}

/** A write that changes one field of the invoice's list item, committed on its own; the time after its commit. */
async function touch(knex: Knex, invoiceId: number): Promise<number> {
  await knex('invoices').where({ id: invoiceId }).increment('payment_term', 60);
  return wallNow();
}

/**
 * The ordinary tenant's load, the same in both phases: PDFs one at a time
 * (each another invoice, so each renders) and, beside them, writes to other
 * invoices at a steady pace, each timed from its commit to its webhook at the
 * fast receiver; and one long poll of its own held throughout.
 */
async function ordinaryLoad(stack: Stack, pdfIds: number[], writeIds: number[]): Promise<OrdinaryResults> {
  const started = Date.now();
  const poll = holdLongPolls(stack, ORDINARY, 1, await stack.lastEventId(ORDINARY));
  const pdfTimes: number[] = [];
  const failed: Record<string, number> = {};
  const pdfs = (async () => {
    const agent = keepAliveAgent(1);
    try {
      for (const id of pdfIds) {
        try {
          const answer = await stack.call(agent, ORDINARY, { path: `/v1/invoices/${id}/pdf?lang=pl`, timeoutMs: 120_000 });
          if (answer.status === 200 && answer.body.subarray(0, 5).toString('latin1') === '%PDF-') pdfTimes.push(answer.ms);
          else bump(failed, answer.status);
        } catch (error) {
          bump(failed, (error as NodeJS.ErrnoException).code ?? 'error');
        }
      }
    } finally {
      agent.destroy();
    }
  })();

  const latencies: Array<number | null> = writeIds.map(() => null);
  const commits: number[] = [];
  const receipts: Array<Promise<void>> = [];
  const writes = (async () => {
    for (const [i, invoiceId] of writeIds.entries()) {
      const got = stack.fast.next((message) => {
        const event = JSON.parse(message.body) as { type: string; data: { object: { id: number } } };
        return event.type === 'invoice.updated' && event.data.object.id === invoiceId;
      }, 120_000);
      const committed = await touch(stack.knex, invoiceId);
      commits[i] = committed;
      receipts.push(
        got.then(
          (message) => {
            latencies[i] = message.at - committed;
          },
          () => undefined,
        ),
      );
      // Spread over the PDFs' time, at a pace random against the publisher's interval.
      await sleep(500 + Math.random() * 500);
    }
  })();

  await Promise.all([pdfs, writes]);
  await Promise.race([Promise.all(receipts), sleep(STRAGGLERS_MS)]);
  const end = wallNow();
  await poll.stop();
  const received = latencies.filter((value): value is number => value !== null);
  // Each write not received had waited at least this long since its commit when the phase ended.
  const waited = latencies.flatMap((value, i) => (value === null ? [end - commits[i]!] : []));
  return {
    pdf: { ...summarize(pdfTimes), failed },
    webhook: {
      ...summarize(received),
      writes: writeIds.length,
      received: received.length,
      missing: waited.length,
      missingWaitedMs: waited.length ? Math.min(...waited) : null,
    },
    longPoll: poll.counts,
    seconds: (Date.now() - started) / 1000,
  };
}

/** The abusive tenant: PDFs of distinct variants kept in flight, replays of a slow endpoint's backlog, long polls over the cap. */
function startAbuse(stack: Stack, options: { burst: number; polls: number; endpointId: number; invoiceIds: number[]; after: number }) {
  let stopped = false;
  const pdf = { served: 0, p50Ms: NaN, other: {} as Record<string, number>, distinctVariants: 0 };
  const servedMs: number[] = [];
  let variant = 0;
  const n = options.invoiceIds.length;
  const pdfAgent = keepAliveAgent(options.burst);
  const pdfLoops = Array.from({ length: options.burst }, async () => {
    while (!stopped) {
      // invoice × lang × duplicate: 12 variants an invoice, none asked for twice (each misses the PDF cache).
      const k = variant++;
      const id = options.invoiceIds[k % n]!;
      const lang = LANGS[Math.floor(k / n) % LANGS.length]!;
      const duplicate = Math.floor(k / (n * LANGS.length)) % 2 === 1;
      try {
        const answer = await stack.call(pdfAgent, ABUSIVE, { path: `/v1/invoices/${id}/pdf?lang=${lang}&duplicate=${duplicate}`, timeoutMs: 120_000 });
        if (answer.status === 200) {
          pdf.served += 1;
          servedMs.push(answer.ms);
        } else bump(pdf.other, answer.status);
      } catch (error) {
        if (stopped) return;
        bump(pdf.other, (error as NodeJS.ErrnoException).code ?? 'error');
      }
    }
  });

  const replays = { accepted: 0, refused: 0, other: 0, scheduled: 0 };
  const replayAgent = keepAliveAgent(1);
  const replayLoop = (async () => {
    while (!stopped) {
      try {
        const answer = await stack.call(replayAgent, ABUSIVE, {
          method: 'POST',
          path: `/v1/webhook-endpoints/${options.endpointId}/replay`,
          ...json({ after: 0 }),
        });
        if (answer.status === 202) {
          replays.accepted += 1;
          replays.scheduled += Number((JSON.parse(answer.body.toString()) as { data?: { scheduled?: number } }).data?.scheduled ?? 0);
        } else if (answer.status === 409) replays.refused += 1;
        else replays.other += 1;
      } catch {
        if (stopped) break;
        replays.other += 1;
      }
      for (let waited = 0; waited < REPLAY_EVERY_MS && !stopped; waited += 250) await sleep(250);
    }
  })();

  const polls = holdLongPolls(stack, ABUSIVE, options.polls, options.after);

  return {
    async stop(): Promise<AbusiveResults> {
      stopped = true;
      await polls.stop();
      await replayLoop;
      replayAgent.destroy();
      // The PDFs in flight end on their own (fair: soon); those not answered by then are cut off.
      await Promise.race([Promise.all(pdfLoops), sleep(30_000)]);
      pdfAgent.destroy();
      pdf.distinctVariants = variant;
      pdf.p50Ms = percentile(servedMs, 50);
      const rows: Array<{ status: string; n: unknown }> = await stack
        .knex('webhook_deliveries')
        .select('status')
        .count({ n: '*' })
        .where({ endpoint_id: options.endpointId })
        .groupBy('status');
      const byStatus = Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
      return {
        inFlight: options.burst,
        pdf,
        replays,
        longPolls: { held: options.polls, ...polls.counts },
        webhooks: { delivered: byStatus.succeeded ?? 0, pending: byStatus.pending ?? 0 },
      };
    },
  };
}

function describe(phase: string, r: OrdinaryResults): void {
  const failed = Object.entries(r.pdf.failed);
  log(
    `fairness ${phase}: ordinary PDFs p50 ${r.pdf.p50.toFixed(0)} ms, p95 ${r.pdf.p95.toFixed(0)} ms (${r.pdf.samples} ok${failed.length ? `, failed ${JSON.stringify(r.pdf.failed)}` : ''}); ` +
      `webhooks p50 ${r.webhook.p50.toFixed(0)} ms, p95 ${r.webhook.p95.toFixed(0)} ms, max ${r.webhook.max.toFixed(0)} ms (${r.webhook.received}/${r.webhook.writes} received` +
      `${r.webhook.missingWaitedMs !== null ? `, the others not after ${(r.webhook.missingWaitedMs / 1000).toFixed(1)} s` : ''}); ` +
      `long poll ${r.longPoll.answered} answered, ${r.longPoll.refused} refused`,
  );
}

async function dropDatabase(config: BenchConfig): Promise<void> {
  const admin = createKnex({ databaseUrl: `${config.mariadbUrl}/mysql`, dataDir: WORK_DIR });
  try {
    await admin.raw(`DROP DATABASE IF EXISTS \`${FAIRNESS_DATABASE}\``);
  } finally {
    await admin.destroy();
  }
}

export async function benchFairness(config: BenchConfig): Promise<FairnessResults> {
  const at = new Date().toISOString();
  const loadAverage = os.loadavg().map((v) => Math.round(v * 100) / 100);
  const settings = config.fairness;
  if (!(await redisAnswers(config.redisUrl)))
    throw new Error(`fairness: Redis does not answer at ${config.redisUrl} (the part runs on the production profile)`);
  // Two directories: 1,000 invoices (the abusive tenant) and 2,000 (the ordinary one).
  const db = await prepareMariadb(config, parseSize('1k'), FAIRNESS_DATABASE, { fresh: true });
  const knex = createKnex({ databaseUrl: db.databaseUrl, dataDir: db.dataDir });
  const prefix = `bench-fair-${randomBytes(4).toString('hex')}`;
  let s3: Awaited<ReturnType<typeof startS3>> | null = null;
  let worker: ChildProcess | null = null;
  let api: ApiProcess | null = null;
  let fast: ReceiverProcess | null = null;
  let slow: ReceiverProcess | null = null;
  try {
    s3 = await startS3();
    const env = { ...db.env, ...s3.env, REDIS_URL: config.redisUrl, REDIS_PREFIX: prefix, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
    log(`fairness: starting a worker and an API process (queue prefix ${prefix}), a fast and a slow (${SLOW_RECEIVER_MS} ms) webhook receiver`);
    worker = await startWorker({ ...env, DATA_DIR: path.join(WORK_DIR, 'worker-fairness') });
    api = await ApiProcess.start('API (fairness)', { ...env, DATA_DIR: path.join(WORK_DIR, 'api-fairness') }, { key: SMALL_KEY, directory: SMALL_DIRECTORY });
    fast = await ReceiverProcess.start();
    slow = await ReceiverProcess.start({ delayMs: SLOW_RECEIVER_MS });
    const stack = new Stack(api, knex, fast, slow);
    fast.watch(true);

    const ids = async (tenant: Tenant) =>
      ((await knex('invoices').select('id').where({ directory: tenant.directory }).orderBy('id')) as Array<{ id: unknown }>).map((row) => Number(row.id));
    const ordinaryIds = await ids(ORDINARY);
    const abusiveIds = await ids(ABUSIVE);
    const { pdfs, writes } = settings;
    if (ordinaryIds.length < 2 * pdfs + 3 + 2 * writes + 1) throw new Error('fairness: too few invoices in the ordinary directory for these settings');
    // Distinct invoices: warm-up, PDFs alone, PDFs under abuse (from the start); writes (from the end).
    const warmIds = ordinaryIds.slice(0, 3);
    const pdfAlone = ordinaryIds.slice(3, 3 + pdfs);
    const pdfAbuse = ordinaryIds.slice(3 + pdfs, 3 + 2 * pdfs);
    const writeWarm = ordinaryIds.slice(-1);
    const writeAlone = ordinaryIds.slice(-1 - writes, -1);
    const writeAbuse = ordinaryIds.slice(-1 - 2 * writes, -1 - writes);

    await stack.createEndpoint(ORDINARY, fast.url('/ordinary'));
    // Warm-up (browser, pages, template, the webhook path), untimed.
    log('fairness: warming up');
    await ordinaryLoad(stack, warmIds, writeWarm);

    log(`fairness: the ordinary tenant alone (${pdfs} PDFs one at a time, ${writes} writes)`);
    const alone = await ordinaryLoad(stack, pdfAlone, writeAlone);
    describe('alone', alone);

    const endpointId = await stack.createEndpoint(ABUSIVE, slow.url('/abusive'));
    log(
      `fairness: the abusive tenant starts (${settings.burst} PDFs in flight, replays every ${REPLAY_EVERY_MS / 1000} s to a ${SLOW_RECEIVER_MS} ms receiver, ${settings.polls} long polls)`,
    );
    const abuse = startAbuse(stack, {
      burst: settings.burst,
      polls: settings.polls,
      endpointId,
      invoiceIds: abusiveIds,
      after: await stack.lastEventId(ABUSIVE),
    });
    let underAbuse: OrdinaryResults;
    let abusive: AbusiveResults;
    try {
      await sleep(SETTLE_MS);
      log('fairness: the same ordinary load under abuse');
      underAbuse = await ordinaryLoad(stack, pdfAbuse, writeAbuse);
    } finally {
      abusive = await abuse.stop();
    }
    describe('under abuse', underAbuse);
    log(
      `fairness: abusive tenant: ${abusive.pdf.served} PDFs served (p50 ${abusive.pdf.p50Ms.toFixed(0)} ms; ${JSON.stringify(abusive.pdf.other)} other), replays ${abusive.replays.accepted} accepted / ${abusive.replays.refused} refused (409), ` +
        `long polls ${abusive.longPolls.answered} answered / ${abusive.longPolls.refused} refused (429); its webhooks ${abusive.webhooks.delivered} delivered, ${abusive.webhooks.pending} pending`,
    );
    api.assertRunning();
    return {
      at,
      loadAverage,
      settings: {
        invoices: { ordinary: ordinaryIds.length, abusive: abusiveIds.length },
        pdfsPerPhase: pdfs,
        writesPerPhase: writes,
        burst: settings.burst,
        longPolls: settings.polls,
        slowReceiverMs: SLOW_RECEIVER_MS,
        replayEveryMs: REPLAY_EVERY_MS,
      },
      alone,
      abuse: { ...underAbuse, abusive },
    };
  } finally {
    await api?.stop();
    if (worker) await stopChild(worker, 25_000);
    await fast?.stop();
    await slow?.stop();
    await s3?.stop();
    await deleteRedisKeys(config.redisUrl, prefix).catch(() => undefined);
    await knex.destroy();
    await dropDatabase(config).catch((error: unknown) => log(`fairness: dropping ${FAIRNESS_DATABASE} failed: ${String(error)}`));
  }
}
