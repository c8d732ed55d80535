import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import readline from 'node:readline';
import { Redis } from 'ioredis';
import { Client } from 'minio';
import { ApiProcess, serviceEnv } from './api-process.js';
import { ROOT, WORK_DIR, type BenchConfig } from './config.js';
import { log } from './progress.js';
import { childNodeArgs, OutputTail, spawnTracked, stopChild } from './processes.js';
import type { BenchDatabase } from './seed.js';
import { S3RVER_ACCESS_KEY, S3RVER_SECRET_KEY } from '../support/s3rver.js';
import { freePort } from '../support/free-port.js';

export const BUCKET = 'logi-bench';

/**
 * The S3 server (s3rver) in a process of its own (s3-process.ts), as a real
 * deployment has it: in the benchmark's process it would share one event
 * loop with the load generator and slow both.
 */
export async function startS3(): Promise<{ stop: () => Promise<void>; client: Client; env: Record<string, string> }> {
  const child = spawnTracked(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/bench/s3-process.ts')], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const tail = new OutputTail();
  child.stderr!.on('data', (chunk: Buffer) => tail.push(chunk));
  const endPoint = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the S3 server did not start: ${String(tail)}`)), 30_000);
    readline.createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { endPoint: string }).endPoint);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the S3 server exited with ${code}: ${String(tail)}`));
    });
  });
  const client = new Client({
    endPoint: '127.0.0.1',
    port: Number(new URL(endPoint).port),
    useSSL: false,
    accessKey: S3RVER_ACCESS_KEY,
    secretKey: S3RVER_SECRET_KEY,
    pathStyle: true,
  });
  if (!(await client.bucketExists(BUCKET))) await client.makeBucket(BUCKET, 'us-east-1');
  return {
    // Closing stdin asks the process to stop and remove its data.
    stop: async () => {
      const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      child.stdin!.end();
      await Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref())]);
      await stopChild(child);
    },
    client,
    env: { S3_ENDPOINT: endPoint, S3_ACCESS_KEY: S3RVER_ACCESS_KEY, S3_SECRET_KEY: S3RVER_SECRET_KEY, S3_BUCKET: BUCKET },
  };
}

export async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2_000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * A `pnpm worker` process (through tsx directly), tracked like every child. `runUnder`: a command it is run through
 * that execs it in place, as `WorkerProcess.start` takes it (`WITHOUT_CAP_SYS_NICE`: as the image runs its workers).
 */
export async function startWorker(env: Record<string, string>, options: { runUnder?: string[] } = {}): Promise<ChildProcess> {
  const output = new OutputTail();
  const command = [...(options.runUnder ?? []), process.execPath, ...childNodeArgs(), '--import', 'tsx', path.join(ROOT, 'packages/worker/src/main.ts')];
  const child = spawnTracked(command[0]!, command.slice(1), {
    cwd: ROOT,
    env: serviceEnv({ LOG_LEVEL: 'info', METRICS_PORT: '0', CHROMIUM_PATH: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start within 60 s:\n${output.toString()}`)), 60_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(line);
      if (line.includes('"worker started"')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}:\n${output.toString()}`));
    });
  });
  return child;
}

/**
 * The production-like stacks the PDF and upload parts run on, both on the
 * same small MariaDB database and the same S3 server: `inline` (jobs in the
 * API process) and `queue` (Redis/BullMQ and one worker process).
 */
export interface IoStack {
  name: 'inline' | 'queue';
  description: string;
  api: ApiProcess;
  /** The metrics port of the process that runs the jobs: the API (inline) or the worker (queue). */
  jobMetricsPort: number;
  stop(): Promise<void>;
}

export async function startIoStacks(config: BenchConfig, db: BenchDatabase, s3Env: Record<string, string>): Promise<IoStack[]> {
  const stacks: IoStack[] = [];
  const auth = { key: db.apiKey, directory: db.directory };
  const base = { ...db.env, ...s3Env };
  const inlineMetrics = await freePort();
  const inline = await ApiProcess.start(
    'API (inline jobs)',
    { ...base, DATA_DIR: path.join(WORK_DIR, 'api-io-inline'), METRICS_PORT: String(inlineMetrics) },
    auth,
  );
  stacks.push({
    name: 'inline',
    description: 'MariaDB + S3 (s3rver), jobs in the API process',
    api: inline,
    jobMetricsPort: inlineMetrics,
    stop: () => inline.stop(),
  });
  if (!config.queueStack) return stacks;
  if (!(await redisAnswers(config.redisUrl))) {
    log(`WARNING: Redis does not answer at ${config.redisUrl}; the queue stack (BullMQ + worker) is skipped`);
    return stacks;
  }
  const prefix = `bench-${randomBytes(4).toString('hex')}`;
  const queueEnv = { ...base, REDIS_URL: config.redisUrl, REDIS_PREFIX: prefix };
  let worker: ChildProcess | null = null;
  try {
    const workerMetrics = await freePort();
    worker = await startWorker({ ...queueEnv, DATA_DIR: path.join(WORK_DIR, 'worker-io'), METRICS_PORT: String(workerMetrics) });
    const api = await ApiProcess.start('API (queue)', { ...queueEnv, DATA_DIR: path.join(WORK_DIR, 'api-io-queue') }, auth);
    const started = worker;
    stacks.push({
      name: 'queue',
      description: 'MariaDB + S3 (s3rver) + Redis/BullMQ, one worker process',
      api,
      jobMetricsPort: workerMetrics,
      stop: async () => {
        await api.stop();
        await stopChild(started, 25_000);
        await deleteRedisKeys(config.redisUrl, prefix).catch(() => undefined);
      },
    });
  } catch (error) {
    if (worker) await stopChild(worker, 5_000);
    await deleteRedisKeys(config.redisUrl, prefix).catch(() => undefined);
    throw error;
  }
  return stacks;
}
