import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createKnex, migrateLatest } from '@logi/adapters';
import { serviceEnv } from './api-process.js';
import { ROOT, WORK_DIR, type BenchConfig } from './config.js';
import { freePort } from '../support/free-port.js';
import { startS3 } from './io-stack.js';
import { onCleanup, OutputTail, spawnTracked } from './processes.js';
import { log, median } from './progress.js';
import { descendantsOf } from '../support/process-tree.js';
import { deleteRedisKeys } from '../support/production-stack.js';

const run = promisify(execFile);

export type StartupProcess = 'api' | 'worker';

/** How a process is started: the built code, or its TypeScript through tsx as before `pnpm build` existed. */
export interface StartupVariant {
  id: 'built' | 'tsx' | 'tsx-cold' | 'pnpm-tsx-cold';
  label: string;
  /** A fresh, empty tsx cache (TMPDIR), as in a new container. */
  cold: boolean;
  command(process: StartupProcess): string[];
}

const SOURCE = { api: 'packages/api/src/main.ts', worker: 'packages/worker/src/main.ts' };
const BUILT = { api: 'packages/service/api.js', worker: 'packages/service/worker.js' };

export const VARIANTS: StartupVariant[] = [
  { id: 'built', label: 'built: `node api.js` / `node worker.js` (the image now)', cold: false, command: (p) => [process.execPath, BUILT[p]] },
  { id: 'tsx', label: 'tsx, its cache warm: `node --import tsx src/main.ts`', cold: false, command: (p) => [process.execPath, '--import', 'tsx', SOURCE[p]] },
  { id: 'tsx-cold', label: 'tsx, its cache empty (a new container)', cold: true, command: (p) => [process.execPath, '--import', 'tsx', SOURCE[p]] },
  {
    id: 'pnpm-tsx-cold',
    label: 'the image before: `pnpm start` / `pnpm worker` through tsx, cache empty (a new container)',
    cold: true,
    command: (p) => ['pnpm', '--silent', 'exec', 'tsx', SOURCE[p]],
  },
];

export interface StartupRow {
  process: StartupProcess;
  variant: StartupVariant['id'];
  label: string;
  /** Spawn to the first 200 from /health/ready, each run. */
  readyMs: number[];
  /** Resident memory of the process and its children (pnpm, tsx's own) at that moment, each run. */
  rssMiB: number[];
  readyMedianMs: number;
  rssMedianMiB: number;
}

export interface StartupResults {
  at: string;
  loadAverage: number[];
  node: string;
  rounds: number;
  /** What both ran on: the production profile. */
  stack: string;
  rows: StartupRow[];
}

function integerEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}, not "${raw}"`);
  return value;
}

/** Resident memory of `pid` and every process below it, in MiB. */
async function treeRssMiB(pid: number): Promise<number> {
  let kib = 0;
  for (const member of [pid, ...descendantsOf(pid).map((p) => p.pid)]) {
    const status = await readFile(`/proc/${member}/status`, 'utf8').catch(() => '');
    kib += Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
  }
  return kib / 1024;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the process group (pnpm, tsx and the server alike); SIGKILL to what is left after 15 s. */
async function stopGroup(child: ChildProcess): Promise<void> {
  const pgid = child.pid!;
  const deadline = Date.now() + 15_000;
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    return;
  }
  while (groupAlive(pgid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
}

/** One start: spawn to ready, then the memory, then a stop. */
async function startOnce(variant: StartupVariant, which: StartupProcess, env: Record<string, string>): Promise<{ readyMs: number; rssMiB: number }> {
  const port = await freePort();
  const tsxCache = variant.cold ? await mkdtemp(path.join(os.tmpdir(), 'logi-bench-tsx-')) : null;
  const dataDir = path.join(WORK_DIR, `startup-${which}`);
  await mkdir(dataDir, { recursive: true });
  const listener: Record<string, string> =
    which === 'api' ? { PORT: String(port), METRICS_PORT: '0' } : { METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1' };
  const [command, ...args] = variant.command(which);
  const output = new OutputTail();
  const started = performance.now();
  const child = spawnTracked(command!, args, {
    cwd: ROOT,
    // Its own process group, so a stop reaches pnpm's and tsx's children too.
    detached: true,
    env: serviceEnv({ ...env, ...listener, DATA_DIR: dataDir, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...(tsxCache ? { TMPDIR: tsxCache } : {}) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk));
  const unregister = onCleanup(() => stopGroup(child));
  try {
    const url = `http://127.0.0.1:${port}/health/ready`;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${which} (${variant.id}) exited with ${child.exitCode} before it was ready:\n${output.toString()}`);
      const status = await fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) break;
      if (performance.now() - started > 120_000) throw new Error(`${which} (${variant.id}) not ready within 120 s:\n${output.toString()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const readyMs = performance.now() - started;
    return { readyMs, rssMiB: await treeRssMiB(child.pid!) };
  } finally {
    await stopGroup(child);
    unregister();
    if (tsxCache) await rm(tsxCache, { recursive: true, force: true });
  }
}

/**
 * The start-up part (issue 19): time from spawn to `/health/ready` (the
 * worker's on its metrics listener) and resident memory then, for the API and
 * the worker on the production profile (MariaDB, Redis, an S3 server), the
 * built code against TypeScript through tsx. The variants alternate within
 * each round, in a rotating order; medians are reported. `pnpm build` runs
 * first, so the built code is the code measured.
 */
export async function benchStartup(config: BenchConfig): Promise<StartupResults> {
  const rounds = integerEnv('BENCH_STARTUP_ROUNDS', 7, 1);
  log('startup: pnpm build');
  await run('pnpm', ['--silent', 'build'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });

  const database = 'logi_bench_startup';
  const admin = createKnex({ databaseUrl: `${config.mariadbUrl}/mysql`, dataDir: WORK_DIR });
  await admin.raw(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin.raw(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  const databaseUrl = `${config.mariadbUrl}/${database}`;
  const knex = createKnex({ databaseUrl, dataDir: WORK_DIR });
  await migrateLatest(knex).finally(() => knex.destroy());
  const s3 = await startS3();
  const prefix = `bench-startup-${randomBytes(4).toString('hex')}`;
  const env = { ...s3.env, DATABASE_URL: databaseUrl, REDIS_URL: config.redisUrl, REDIS_PREFIX: prefix, CHROMIUM_PATH: config.chromiumPath };
  const loadAverage = os.loadavg().map((value) => Number(value.toFixed(2)));

  const rows: StartupRow[] = [];
  try {
    for (const which of ['api', 'worker'] as const) {
      const samples = new Map(VARIANTS.map((variant) => [variant.id, { readyMs: [] as number[], rssMiB: [] as number[] }]));
      // One untimed start of each: tsx's warm cache is warm, the files are in the page cache.
      for (const variant of VARIANTS) await startOnce(variant, which, env);
      for (let round = 0; round < rounds; round++) {
        for (let i = 0; i < VARIANTS.length; i++) {
          const variant = VARIANTS[(round + i) % VARIANTS.length]!;
          const sample = await startOnce(variant, which, env);
          samples.get(variant.id)!.readyMs.push(sample.readyMs);
          samples.get(variant.id)!.rssMiB.push(sample.rssMiB);
        }
        log(`startup: ${which}, round ${round + 1} of ${rounds}`);
      }
      for (const variant of VARIANTS) {
        const { readyMs, rssMiB } = samples.get(variant.id)!;
        rows.push({ process: which, variant: variant.id, label: variant.label, readyMs, rssMiB, readyMedianMs: median(readyMs), rssMedianMiB: median(rssMiB) });
      }
    }
  } finally {
    await s3.stop();
    await deleteRedisKeys(config.redisUrl, `${prefix}:*`).catch(() => undefined);
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- finally() waits for the promise its callback returns
    await admin.raw(`DROP DATABASE IF EXISTS \`${database}\``).finally(() => admin.destroy());
  }
  return {
    at: new Date().toISOString(),
    loadAverage,
    node: process.version,
    rounds,
    stack: 'MariaDB, Redis (BullMQ) and an S3 server (s3rver), as in production',
    rows,
  };
}
