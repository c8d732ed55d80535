/**
 * The exports part (issue 27, `pnpm bench:exports`), production profile (a fresh MariaDB database of its own,
 * Redis with a queue prefix of its own, s3rver, one API process and one worker process):
 *
 * 1. the bare renderer (in this process, the worker's pool size) printing invoices of the exporting directory: PDFs/s;
 * 2. another client's interactive PDFs one at a time, idle: p50/p95;
 * 3. an export of about `BENCH_EXPORTS_INVOICES` invoices with PDFs on a cold PDF cache, timed from `running` to
 *    `succeeded`, while the other client's PDFs are timed again: the export's PDFs/s against the bare renderer's
 *    (bare measured again after it; the better of the two), and the interactive p95 against idle;
 * 4. an export of all `BENCH_EXPORTS_RSS_INVOICES` invoices: the worker's RSS sampled throughout, its growth over the
 *    RSS before it;
 * 5. worker pools (ADR 0053): the worker replaced by one with `WORKER_QUEUES=interactive` and one with `bulk`, the other
 *    client's PDFs idle and during the speed export again (in German: a cold PDF cache for both), p95 against idle.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChromiumPdfRenderer, createKnex, KnexClientRepository, KnexInvoiceRepository } from '@logi/adapters';
import { buildInvoiceDocument, type InvoiceDocument } from '@logi/domain';
import { ApiProcess } from './api-process.js';
import { formatSizeLabel, parseSize, WORK_DIR, type BenchConfig } from './config.js';
import { keepAliveAgent, request } from './http.js';
import { deleteRedisKeys, redisAnswers, startS3, startWorker } from './io-stack.js';
import { WITHOUT_CAP_SYS_NICE } from '../support/worker-process.js';
import { atConcurrency } from './pdf.js';
import { stopChild } from './processes.js';
import { log, percentile } from './progress.js';
import { BIG_DIRECTORY, BIG_KEY, SMALL_DIRECTORY, SMALL_KEY } from './seed-data.js';
import { prepareMariadb } from './seed.js';

export const EXPORTS_DATABASE = 'logi_bench_exports';
/** The speed export's filter: branches 2 and 3, about 45 % of the seeded invoices (25 % + 20 %). */
const SPEED_FILTER = { branch_ids: '2,3' };
/** The worker's render pool: WORKER_CONCURRENCY's default. */
const POOL = 2;
/** How often the benchmark reads an export's status while it waits for it to end (a state, read again; not a timed wait). */
const STATUS_POLL_MS = 100;
const BIG = { Authorization: `Bearer ${BIG_KEY}`, 'X-Client-Directory': BIG_DIRECTORY };
const SMALL = { Authorization: `Bearer ${SMALL_KEY}`, 'X-Client-Directory': SMALL_DIRECTORY };

export interface ExportsResults {
  at: string;
  loadAverage: number[];
  seeded: number;
  /** Where archives and PDFs were stored: the test S3 server, or local files shared by the API and the worker. */
  storage?: 's3rver' | 'local files';
  /** Not measured with `BENCH_EXPORTS_ONLY=memory`. */
  speed?: { invoices: number; seconds: number; perSecond: number; barePerSecond: number; ratio: number };
  interactive?: { samples: number; idleP50: number; idleP95: number; busyP50: number; busyP95: number; ratio: number };
  /**
   * The other client's PDFs after it asked for none for `quietMs` each (up to `LULL_SAMPLES`), while the export's
   * renders hold every page (ADR 0059); those that ended after the export are not counted.
   */
  afterLull?: { quietMs: number; times: number[] };
  /**
   * The worker's RSS before the export, at most during it, and after it (the export succeeded, then `SETTLE_MS` of idle
   * sampling: the lowest); anonymous RSS (heap and Buffers, not mapped files) alike.
   */
  rss: {
    invoices: number;
    seconds: number;
    beforeMiB: number;
    maxMiB: number;
    growthMiB: number;
    afterMiB?: number;
    anonBeforeMiB?: number;
    anonMaxMiB?: number;
    anonAfterMiB?: number;
  };
  /** The same interactive figures with one interactive and one bulk worker (WORKER_QUEUES). */
  pools?: { samples: number; idleP50: number; idleP95: number; busyP50: number; busyP95: number; ratio: number; invoices: number; seconds: number };
}

/** How long the other client asks for nothing before its PDF of the export's every page busy (ADR 0059). */
const LULL_MS = 10_000;
/** How many such PDFs, each after its own quiet time, while the export runs. */
const LULL_SAMPLES = 3;

const wallNow = () => performance.timeOrigin + performance.now();

/** The process's resident set and its anonymous part (heap, Buffers; not mapped files), in MiB. */
async function rssOf(pid: number): Promise<{ rss: number; anon: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: field('VmRSS'), anon: field('RssAnon') };
}

/**
 * How long the worker is sampled idle after the RSS export succeeded (the lowest reading is its RSS after). Long enough
 * for V8's memory reducer, which shrinks the heap of a process whose allocations stopped about 8 s after they did
 * (runs before 2026-11-29 18:30 UTC sampled 5 s, and read what the heap held before it ran).
 */
const SETTLE_MS = 30_000;
/** The first part of that idle time, logged on its own: what the 5 s runs before it read. */
const EARLY_SETTLE_MS = 5_000;

export async function benchExports(config: BenchConfig): Promise<ExportsResults> {
  const at = new Date().toISOString();
  const loadAverage = os.loadavg().map((v) => Math.round(v * 100) / 100);
  const { invoices: speedTarget, rssInvoices, pdfs } = config.exports;
  if (!(await redisAnswers(config.redisUrl))) throw new Error(`exports: Redis does not answer at ${config.redisUrl} (the part runs on the production profile)`);
  // The seed's big directory: enough that branches 2 and 3 hold about the speed export's invoices, and the RSS export all.
  const seeded = Math.max(rssInvoices, Math.ceil(speedTarget / 0.45));
  const db = await prepareMariadb(config, parseSize(formatSizeLabel(seeded)), EXPORTS_DATABASE, { fresh: true });
  const knex = createKnex({ databaseUrl: db.databaseUrl, dataDir: db.dataDir });
  const prefix = `bench-exports-${randomBytes(4).toString('hex')}`;
  let s3: Awaited<ReturnType<typeof startS3>> | null = null;
  let worker: ChildProcess | null = null;
  const poolWorkers: ChildProcess[] = [];
  let api: ApiProcess | null = null;
  const bare = new ChromiumPdfRenderer({ chromiumPath: config.chromiumPath, rendersPerBrowser: 100_000, renderTimeoutMs: 120_000, poolSize: POOL });
  try {
    // The test S3 server (s3rver) answers no multipart upload, which the minio client uses above 64 MiB, and an archive
    // of 2,000 PDFs is larger: `BENCH_EXPORTS_S3=0` stores on one local files directory that the API and worker share.
    const onS3 = process.env.BENCH_EXPORTS_S3 !== '0';
    if (onS3) s3 = await startS3();
    const env = { ...db.env, ...(s3?.env ?? {}), REDIS_URL: config.redisUrl, REDIS_PREFIX: prefix, EXPORT_MAX_INVOICES: String(seeded + 1) };
    const dataDir = (name: string) => path.join(WORK_DIR, onS3 ? name : 'shared-exports');
    // The export starts on an empty PDF cache: a shared files directory left by an earlier run would hold its PDFs.
    if (!onS3) await rm(dataDir(''), { recursive: true, force: true });
    log(`exports: ${seeded} invoices seeded; starting a worker and an API process (queue prefix ${prefix}; ${onS3 ? 's3rver' : 'local files'})`);
    worker = await startWorker({ ...env, DATA_DIR: dataDir('worker-exports') });
    api = await ApiProcess.start('API (exports)', { ...env, DATA_DIR: dataDir('api-exports') }, { key: SMALL_KEY, directory: SMALL_DIRECTORY });
    const agent = keepAliveAgent(4);
    const call = (headers: Record<string, string>, method: string, pathAndQuery: string, body?: unknown) =>
      request(agent, api!.port, {
        method,
        path: pathAndQuery,
        headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
      });

    // `BENCH_EXPORTS_ONLY=memory`: only part 4 (the worker's RSS), without the bare renderer, the speed export and pools.
    const memoryOnly = process.env.BENCH_EXPORTS_ONLY === 'memory';
    // Waits for an export to succeed, reading its status.
    const waitFor = async (id: number, onRunning: () => void, sample?: () => Promise<void>) => {
      let running: number | null = null;
      for (;;) {
        const answer = await call(BIG, 'GET', `/v1/exports/${id}`);
        const item = JSON.parse(answer.body.toString()).data as { status: string; total: number | null; error: string | null };
        if (item.status === 'running' && running === null) {
          running = wallNow();
          onRunning();
        }
        if (item.status === 'failed') throw new Error(`exports: export ${id} failed: ${item.error}`);
        if (item.status === 'succeeded') return { seconds: (wallNow() - (running ?? wallNow())) / 1000, total: item.total ?? 0 };
        await sample?.();
        await sleep(STATUS_POLL_MS);
      }
    };
    // The other client's invoices and its PDFs one at a time (parts 2, 3 and 5).
    const smallIds = (
      (await knex('invoices')
        .select('id')
        .where({ directory: SMALL_DIRECTORY })
        .orderBy('id')
        .limit(3 + 2 * pdfs + LULL_SAMPLES)) as Array<{ id: unknown }>
    ).map((r) => Number(r.id));
    const interactive = async (ids: number[], lang = 'pl') => {
      const times: number[] = [];
      for (const id of ids) {
        const started = wallNow();
        const answer = await call(SMALL, 'GET', `/v1/invoices/${id}/pdf?lang=${lang}`);
        if (answer.status !== 200) throw new Error(`exports: interactive PDF ${id} answered ${answer.status}`);
        times.push(wallNow() - started);
      }
      return times;
    };
    let speedPart: Pick<ExportsResults, 'speed' | 'interactive' | 'afterLull'> = {};
    if (!memoryOnly) {
      // 1. The bare renderer on invoices of the exporting directory.
      const invoiceRepo = new KnexInvoiceRepository(knex);
      const client = await new KnexClientRepository(knex).findByDirectory(BIG_DIRECTORY);
      if (!client) throw new Error(`no client ${BIG_DIRECTORY}`);
      const bareIds = ((await knex('invoices').select('id').where({ directory: BIG_DIRECTORY }).orderBy('id').limit(60)) as Array<{ id: unknown }>).map((r) =>
        Number(r.id),
      );
      const documents: InvoiceDocument[] = [];
      for (const id of bareIds) documents.push(buildInvoiceDocument((await invoiceRepo.findDetail(BIG_DIRECTORY, id))!, client.company, 'en', false, 'UTC'));
      const bareRun = async () => (await atConcurrency(documents.length, POOL, async (i) => void (await bare.render(documents[i]!)))).perSecond;
      await atConcurrency(4, POOL, async (i) => void (await bare.render(documents[i]!)));
      const bareBefore = await bareRun();
      log(`exports: bare renderer ${bareBefore.toFixed(1)} PDFs/s`);

      // 2. Another client's PDFs, idle.
      await interactive(smallIds.slice(0, 3));
      const idle = await interactive(smallIds.slice(3, 3 + pdfs));

      // 3. The speed export, the interactive PDFs beside it.
      const created = await call(BIG, 'POST', '/v1/exports', { filters: SPEED_FILTER, documents: ['pdf'] });
      if (created.status !== 202) throw new Error(`exports: POST /v1/exports answered ${created.status}: ${created.body.toString().slice(0, 300)}`);
      const speedId = JSON.parse(created.body.toString()).data.id as number;
      const beside: { pdfs: Promise<number[]> | null } = { pdfs: null };
      // After its PDFs, the client is quiet for a while, then asks for one more: that one finds the export's renders on
      // every page (ADR 0059), as a client that asks now and then does.
      const quietMs = LULL_MS;
      const lull = { exportEnded: false, times: [] as number[] };
      const speed = await waitFor(speedId, () => {
        beside.pdfs = interactive(smallIds.slice(3 + pdfs, 3 + 2 * pdfs)).then(async (times) => {
          for (let i = 0; i < LULL_SAMPLES; i++) {
            await sleep(quietMs);
            if (lull.exportEnded) break;
            const [ms] = await interactive(smallIds.slice(3 + 2 * pdfs + i, 4 + 2 * pdfs + i));
            if (!lull.exportEnded && ms !== undefined) lull.times.push(ms);
          }
          return times;
        });
      });
      lull.exportEnded = true;
      const busyTimes = beside.pdfs ? await beside.pdfs : [];
      const bareAfter = await bareRun();
      const barePerSecond = Math.max(bareBefore, bareAfter);
      const perSecond = speed.total / speed.seconds;
      log(`exports: ${speed.total} invoices with PDFs in ${speed.seconds.toFixed(1)} s: ${perSecond.toFixed(1)}/s against bare ${barePerSecond.toFixed(1)}/s`);
      log(
        `exports: other client p95 ${percentile(busyTimes, 95).toFixed(0)} ms during the export against ${percentile(idle, 95).toFixed(0)} ms idle; ` +
          `its PDFs after ${quietMs} ms without one: ${lull.times.map((ms) => ms.toFixed(0)).join(', ') || 'none (the export had ended)'} ms`,
      );
      speedPart = {
        speed: { invoices: speed.total, seconds: speed.seconds, perSecond, barePerSecond, ratio: perSecond / barePerSecond },
        interactive: {
          samples: idle.length,
          idleP50: percentile(idle, 50),
          idleP95: percentile(idle, 95),
          busyP50: percentile(busyTimes, 50),
          busyP95: percentile(busyTimes, 95),
          ratio: percentile(busyTimes, 95) / percentile(idle, 95),
        },
        afterLull: { quietMs, times: lull.times },
      };
    }

    // 4. Worker RSS over an export of every seeded invoice: before, at most during, and after (idle, the lowest).
    const start = await rssOf(worker.pid!);
    const before = start.rss;
    let max = before;
    let anonMax = start.anon;
    const all = await call(BIG, 'POST', '/v1/exports', { documents: ['pdf'] });
    if (all.status !== 202) throw new Error(`exports: POST /v1/exports answered ${all.status}`);
    const rssRun = await waitFor(
      JSON.parse(all.body.toString()).data.id as number,
      () => undefined,
      async () => {
        const now = await rssOf(worker!.pid!);
        max = Math.max(max, now.rss);
        anonMax = Math.max(anonMax, now.anon);
      },
    );
    let after = Infinity;
    let anonAfter = Infinity;
    let early = Infinity;
    const settleStart = wallNow();
    for (const settleEnd = settleStart + SETTLE_MS; wallNow() < settleEnd; await sleep(STATUS_POLL_MS * 5)) {
      const now = await rssOf(worker.pid!);
      after = Math.min(after, now.rss);
      anonAfter = Math.min(anonAfter, now.anon);
      if (wallNow() - settleStart <= EARLY_SETTLE_MS) early = after;
    }
    log(
      `exports: worker RSS ${before.toFixed(0)} MiB before an export of ${rssRun.total} invoices, at most ${max.toFixed(0)} MiB during it ` +
        `(+${(max - before).toFixed(0)} MiB), ${after.toFixed(0)} MiB after (${((after / before - 1) * 100).toFixed(1)} % over the start; ` +
        `${early.toFixed(0)} MiB within its first ${EARLY_SETTLE_MS / 1000} s idle); ` +
        `anonymous ${start.anon.toFixed(0)} -> ${anonMax.toFixed(0)} -> ${anonAfter.toFixed(0)} MiB`,
    );
    const rss = {
      invoices: rssRun.total,
      seconds: rssRun.seconds,
      beforeMiB: before,
      maxMiB: max,
      growthMiB: max - before,
      afterMiB: after,
      anonBeforeMiB: start.anon,
      anonMaxMiB: anonMax,
      anonAfterMiB: anonAfter,
    };
    if (memoryOnly) {
      api.assertRunning();
      return { at, loadAverage, seeded, storage: onS3 ? 's3rver' : 'local files', rss };
    }

    // 5. Worker pools: one interactive and one bulk worker in place of the one that takes everything.
    await stopChild(worker, 25_000);
    worker = null;
    // As the image runs them (USER node): without CAP_SYS_NICE, so the bulk worker's Chromium keeps its nice 10.
    poolWorkers.push(await startWorker({ ...env, DATA_DIR: dataDir('worker-interactive'), WORKER_QUEUES: 'interactive' }, { runUnder: WITHOUT_CAP_SYS_NICE }));
    poolWorkers.push(await startWorker({ ...env, DATA_DIR: dataDir('worker-bulk'), WORKER_QUEUES: 'bulk' }, { runUnder: WITHOUT_CAP_SYS_NICE }));
    // In German: PDFs neither the cache nor the API's memory holds, for the export and the other client alike.
    await interactive(smallIds.slice(0, 3), 'de');
    const poolsIdle = await interactive(smallIds.slice(3, 3 + pdfs), 'de');
    const poolsExport = await call(BIG, 'POST', '/v1/exports', { filters: SPEED_FILTER, documents: ['pdf'], lang: 'de' });
    if (poolsExport.status !== 202) throw new Error(`exports: POST /v1/exports answered ${poolsExport.status}: ${poolsExport.body.toString().slice(0, 300)}`);
    const poolsBeside: { pdfs: Promise<number[]> | null } = { pdfs: null };
    const poolsRun = await waitFor(JSON.parse(poolsExport.body.toString()).data.id as number, () => {
      poolsBeside.pdfs = interactive(smallIds.slice(3 + pdfs, 3 + 2 * pdfs), 'de');
    });
    const poolsBusy = poolsBeside.pdfs ? await poolsBeside.pdfs : [];
    const pools = {
      samples: poolsIdle.length,
      idleP50: percentile(poolsIdle, 50),
      idleP95: percentile(poolsIdle, 95),
      busyP50: percentile(poolsBusy, 50),
      busyP95: percentile(poolsBusy, 95),
      ratio: percentile(poolsBusy, 95) / percentile(poolsIdle, 95),
      invoices: poolsRun.total,
      seconds: poolsRun.seconds,
    };
    log(
      `exports: pools (interactive + bulk worker): other client p95 ${pools.busyP95.toFixed(0)} ms during the export against ${pools.idleP95.toFixed(0)} ms idle`,
    );
    api.assertRunning();
    return { at, loadAverage, seeded, storage: onS3 ? 's3rver' : 'local files', ...speedPart, rss, pools };
  } finally {
    await bare.close();
    await api?.stop();
    if (worker) await stopChild(worker, 25_000);
    for (const child of poolWorkers) await stopChild(child, 25_000);
    await s3?.stop();
    await deleteRedisKeys(config.redisUrl, prefix).catch(() => undefined);
    const admin = createKnex({ databaseUrl: `${config.mariadbUrl}/mysql`, dataDir: WORK_DIR });
    await knex.destroy();
    await admin.raw(`DROP DATABASE IF EXISTS \`${EXPORTS_DATABASE}\``).catch(() => undefined);
    await admin.destroy();
  }
}
