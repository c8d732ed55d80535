/**
 * `pnpm test:soak`: mixed traffic at a steady rate against the real API
 * process (and a real worker process in the production profile) for
 * SOAK_MINUTES per profile; samples the RSS, open file descriptors and V8
 * heap in use of each process every 10 s and fits a line through them after
 * the warm-up (Theil–Sen, robust to a collection in the window). The default
 * is 20 minutes: 10 measured after a 10-minute warm-up, since a fresh API's
 * RSS climbs for its first 5 to 10 minutes while V8 sizes its old generation
 * (a 60-minute run levels off from minute 10; docs/reliability.md).
 *
 * Fails (exit 1) on any 5xx other than a 503 (the documented answer to an
 * outage or a late job), on an RSS slope above 1 MiB per minute after the
 * warm-up, on growing descriptors (median of the last third of the samples
 * against the first third), or on a request that gets no answer.
 * Writes .tmp/soak/<profile>.json and .tmp/soak/rss.svg, and prints a
 * Markdown summary (docs/reliability.md quotes it).
 *
 * Knobs: SOAK_PROFILES (embedded,production), SOAK_MINUTES (20),
 * SOAK_WARMUP_MINUTES (10, or half of a shorter run), SOAK_RATE (requests per second, 20).
 * Traffic goes to 127.0.0.1 only, bounded in count and time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createKnex, loadFixtures, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { freePort } from '../support/free-port.js';
import { ProductionStack } from '../support/production-stack.js';
import { DIRS, KEYS, testFixture } from '../support/test-fixture.js';
import type { WorkerProcess } from '../support/worker-process.js';
import { markdown, percentile, robustSlope, rssChart, slope, median, type ProfileReport, type Sample } from './soak-report.js';
import { LIST_QUERIES, PDF_BYTES } from './soak-mix.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const OUT = path.join(ROOT, '.tmp/soak');
const PROFILES = (process.env.SOAK_PROFILES ?? 'embedded,production').split(',').map((p) => p.trim()) as Array<'embedded' | 'production'>;
const MINUTES = Number(process.env.SOAK_MINUTES ?? 20);
const WARMUP_MINUTES = Number(process.env.SOAK_WARMUP_MINUTES ?? Math.min(10, MINUTES / 2));
const RATE = Number(process.env.SOAK_RATE ?? 20);
const SAMPLE_EVERY_MS = 10_000;
const MAX_IN_FLIGHT = 64;
const REQUEST_TIMEOUT_MS = 60_000;
const RSS_SLOPE_LIMIT_MIB_PER_MIN = 1;
const FD_GROWTH_LIMIT = 16;

function headers(): Record<string, string> {
  return { Authorization: `Bearer ${KEYS.baltic}`, 'X-Client-Directory': DIRS.baltic };
}

/** One request of the mix; returns its kind, so latencies are kept apart. */
type Call = { kind: string; run: (root: string, signal: AbortSignal) => Promise<Response> };

function pick<T>(list: readonly T[], i: number): T {
  return list[i % list.length]!;
}

function callFor(i: number): Call {
  const slot = i % 20;
  if (slot < 12) {
    return { kind: 'list', run: (root, signal) => fetch(`${root}/v1/invoices${pick(LIST_QUERIES, i)}`, { headers: headers(), signal }) };
  }
  if (slot < 16) {
    const nr = pick(['0412', 'BH/2026', 'no-such-order', 'ord'], i);
    return { kind: 'by-nr', run: (root, signal) => fetch(`${root}/v1/orders/by-nr?nr=${encodeURIComponent(nr)}`, { headers: headers(), signal }) };
  }
  if (slot < 18) {
    return {
      kind: 'upload',
      run: (root, signal) => {
        const form = new FormData();
        form.append('files', new Blob([PDF_BYTES, Buffer.from(`soak ${i}`)]), `cmr-${i}.pdf`);
        return fetch(`${root}/v1/orders/3001/files`, { method: 'POST', body: form, headers: headers(), signal });
      },
    };
  }
  return { kind: 'pdf', run: (root, signal) => fetch(`${root}/v1/invoices/9001/pdf?lang=${pick(['en', 'pl', 'de'], i)}`, { headers: headers(), signal }) };
}

interface Watched {
  pid: number;
  metricsUrl: string | null;
}

async function sampleProcess({ pid, metricsUrl }: Watched): Promise<Omit<Sample, 'atMin'>> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  return { rssMiB: rssKiB / 1024, fds, ...(await memoryMiB(metricsUrl)) };
}

/** prom-client's heap and external-memory gauges of one process, in MiB; nulls when there is no metrics listener or it does not answer. */
async function memoryMiB(metricsUrl: string | null): Promise<Pick<Sample, 'heapUsedMiB' | 'heapTotalMiB' | 'externalMiB'>> {
  const none = { heapUsedMiB: null, heapTotalMiB: null, externalMiB: null };
  if (!metricsUrl) return none;
  try {
    const lines = (await (await fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) })).text()).split('\n');
    // Each sample carries the process's labels (`nodejs_heap_size_used_bytes{service="api"} 45383472`).
    const gauge = (name: string) => {
      const line = lines.find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) / 2 ** 20 : null;
    };
    return {
      heapUsedMiB: gauge('nodejs_heap_size_used_bytes'),
      heapTotalMiB: gauge('nodejs_heap_size_total_bytes'),
      externalMiB: gauge('nodejs_external_memory_bytes'),
    };
  } catch {
    return none;
  }
}

async function startApi(env: Record<string, string>): Promise<{ child: ChildProcess; root: string; metricsUrl: string | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'packages/api/src/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(await freePort()),
      PORT: '0',
      HOST: '127.0.0.1',
      RATE_LIMIT_MAX: '1000000000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  let metricsUrl: string | null = null;
  const root = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`API did not start: ${stderr.join('')}`)), 60_000);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'metrics listening' && entry.url) metricsUrl = entry.url;
        if (entry.msg === 'API listening' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url.replace(/\/$/, ''));
        }
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`API exited with ${code}: ${stderr.join('')}`));
    });
  });
  // The metrics listener starts right after the API's own and logs its address then.
  const metricsBy = Date.now() + 10_000;
  while (metricsUrl === null && Date.now() < metricsBy) await new Promise((resolve) => setTimeout(resolve, 50));
  return { child, root, metricsUrl };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

async function soakProfile(profile: 'embedded' | 'production'): Promise<ProfileReport> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `logi-soak-${profile}-`));
  const stack = profile === 'production' ? await ProductionStack.start('soak') : null;
  const env: Record<string, string> = { DATA_DIR: dataDir, ...(stack?.env ?? {}) };
  const knex = createKnex({ databaseUrl: env.DATABASE_URL ?? null, dataDir });
  await migrateLatest(knex);
  await loadFixtures(knex, testFixture, { hasher: new Sha256ApiKeyHasher() });
  await knex.destroy();
  let worker: WorkerProcess | null = null;
  if (stack) worker = await stack.startWorker(dataDir, { METRICS_HOST: '127.0.0.1', METRICS_PORT: String(await freePort()) });
  const { child, root, metricsUrl } = await startApi(env);
  const processes: Record<string, Watched> = { api: { pid: child.pid!, metricsUrl } };
  if (worker) {
    const workerMetrics = worker.logs.find((entry) => entry.msg === 'metrics listening')?.url;
    processes.worker = { pid: worker.pid, metricsUrl: typeof workerMetrics === 'string' ? workerMetrics : null };
  }
  const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(processes).map((name) => [name, []]));

  const started = Date.now();
  const endAt = started + MINUTES * 60_000;
  const byStatus: Record<string, number> = {};
  const latencies: Record<string, number[]> = {};
  let requests = 0;
  let noAnswer = 0;
  let skipped = 0;
  let inFlight = 0;
  const pending = new Set<Promise<void>>();

  const sampleAll = async () => {
    const atMin = (Date.now() - started) / 60_000;
    for (const [name, watched] of Object.entries(processes)) samples[name]!.push({ atMin, ...(await sampleProcess(watched)) });
  };
  await sampleAll();
  const sampler = setInterval(() => void sampleAll().catch(() => undefined), SAMPLE_EVERY_MS);
  const progress = setInterval(() => {
    const minutes = ((Date.now() - started) / 60_000).toFixed(1);
    process.stderr.write(`\r${profile}: ${minutes}/${MINUTES} min, ${requests} requests, ${JSON.stringify(byStatus)}\x1b[K`);
  }, 2_000);

  try {
    for (let i = 0; Date.now() < endAt; i += 1) {
      const due = started + (i * 1000) / RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped += 1;
        continue;
      }
      const call = callFor(i);
      requests += 1;
      inFlight += 1;
      const t0 = performance.now();
      const done = call
        .run(root, AbortSignal.timeout(REQUEST_TIMEOUT_MS))
        .then(async (response) => {
          await response.arrayBuffer();
          byStatus[response.status] = (byStatus[response.status] ?? 0) + 1;
          (latencies[call.kind] ??= []).push(performance.now() - t0);
        })
        .catch(() => {
          noAnswer += 1;
        })
        .finally(() => {
          inFlight -= 1;
          pending.delete(done);
        });
      pending.add(done);
    }
    await Promise.all(pending);
    await sampleAll();
  } finally {
    clearInterval(sampler);
    clearInterval(progress);
    process.stderr.write('\n');
    await stopChild(child);
    await stack?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }

  const failures: string[] = [];
  const report: ProfileReport = {
    profile,
    minutes: MINUTES,
    requests,
    byStatus,
    noAnswer,
    skipped,
    latencyMs: Object.fromEntries(
      Object.entries(latencies).map(([kind, values]) => {
        const sorted = [...values].sort((a, b) => a - b);
        return [kind, { p50: Math.round(percentile(sorted, 50)), p99: Math.round(percentile(sorted, 99)), n: sorted.length }];
      }),
    ),
    processes: {},
    failures,
  };
  for (const [name, list] of Object.entries(samples)) {
    const after = list.filter((s) => s.atMin >= WARMUP_MINUTES);
    const rssSlope = robustSlope(after.map((s) => [s.atMin, s.rssMiB]));
    const rssLeastSquares = slope(after.map((s) => [s.atMin, s.rssMiB]));
    const series = (value: (s: Sample) => number | null) => {
      const points = after.flatMap((s): Array<[number, number]> => (value(s) === null ? [] : [[s.atMin, value(s)!]]));
      return points.length > 1 ? Number(robustSlope(points).toFixed(3)) : null;
    };
    // Growth, not a moment's peak: the median of the last third against that of the first third
    // (a sample taken while 60 requests are in flight holds their sockets, and says nothing of a leak).
    const third = Math.max(1, Math.floor(after.length / 3));
    const fdGrowth = after.length ? median(after.slice(-third).map((s) => s.fds)) - median(after.slice(0, third).map((s) => s.fds)) : 0;
    report.processes[name] = {
      samples: list,
      rssSlopeMiBPerMin: Number(rssSlope.toFixed(3)),
      rssLeastSquaresMiBPerMin: Number(rssLeastSquares.toFixed(3)),
      heapSlopeMiBPerMin: series((s) => s.heapUsedMiB),
      heapTotalSlopeMiBPerMin: series((s) => s.heapTotalMiB),
      externalSlopeMiBPerMin: series((s) => s.externalMiB),
      fdGrowth,
    };
    if (rssSlope > RSS_SLOPE_LIMIT_MIB_PER_MIN)
      failures.push(`${name}: RSS grows ${rssSlope.toFixed(2)} MiB/min after warm-up (limit ${RSS_SLOPE_LIMIT_MIB_PER_MIN})`);
    if (fdGrowth > FD_GROWTH_LIMIT) failures.push(`${name}: open descriptors grew by ${fdGrowth} after warm-up`);
  }
  for (const [status, count] of Object.entries(byStatus)) {
    if (Number(status) >= 500 && Number(status) !== 503) failures.push(`${count} answers with status ${status}`);
  }
  if (noAnswer > 0) failures.push(`${noAnswer} requests got no answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
  if (requests === 0) failures.push('no request was sent');
  return report;
}

const reports: ProfileReport[] = [];
for (const profile of PROFILES) {
  console.error(`soak: ${profile}, ${MINUTES} min at ${RATE} requests/s (warm-up ${WARMUP_MINUTES} min)`);
  const report = await soakProfile(profile);
  reports.push(report);
  await mkdir(OUT, { recursive: true });
  await writeFile(path.join(OUT, `${profile}.json`), JSON.stringify(report, null, 2));
}
await writeFile(path.join(OUT, 'rss.svg'), rssChart(reports));
console.log(markdown(reports));
const failed = reports.flatMap((r) => r.failures.map((f) => `${r.profile}: ${f}`));
for (const failure of failed) console.error(`FAIL ${failure}`);
console.log(`${reports.length - new Set(failed.map((f) => f.split(':')[0])).size} passed, ${new Set(failed.map((f) => f.split(':')[0])).size} failed`);
process.exit(failed.length ? 1 : 0);
