import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import type { PausableProcess } from '../support/private-services.js';
import { PrivateStack } from '../support/private-stack.js';
import { WorkerProcess } from '../support/worker-process.js';

/**
 * Each dependency of the production profile (Redis, MariaDB, the S3 server)
 * paused with SIGSTOP while lists, lookups, uploads and PDFs are under way:
 * its sockets stay open and accept bytes, but nothing answers, which no
 * refused connection shows. The dependencies are private child processes
 * (the machine's shared MariaDB and Redis are never stopped); the API runs in
 * this process, the worker in its own, and neither is restarted.
 */

const JOB_TIMEOUT_MS = 8_000;
const DB_QUERY_TIMEOUT_MS = 2_000;
/** docs/operate/runbook.md (fault table): a request waits at most 10 s for a database connection (knex acquire timeout). */
const DB_ACQUIRE_TIMEOUT_MS = 10_000;
/** docs/operate/runbook.md (fault table): the rate limiter's Redis commands time out after 500 ms and the request goes through. */
const RATE_LIMIT_REDIS_TIMEOUT_MS = 500;
/** docs/operate/runbook.md (fault table): an S3 request that makes no progress for 5 s is aborted. */
const S3_REQUEST_TIMEOUT_MS = 5_000;
/** What a loaded 2-core machine adds to a bound (scheduling, the request's own work). */
const SLACK_MS = 1_500;

type Kind = 'list' | 'lookup' | 'upload' | 'pdf';

interface Outcome {
  kind: Kind;
  status: number;
  ms: number;
  retryAfter: string | null;
  /** The envelope (JSON answers) or the bytes (a PDF). */
  body: any;
}

/** The documented answer of each kind of request while one dependency is paused: statuses allowed, and the bound. */
const EXPECTED: Record<'redis' | 'mariadb' | 's3', Record<Kind, { statuses: number[]; withinMs: number }>> = {
  // Rate limiting fails open; a job request answers 503 at once or by its deadline (an upload reads the database after it).
  redis: {
    list: { statuses: [200], withinMs: RATE_LIMIT_REDIS_TIMEOUT_MS + SLACK_MS },
    lookup: { statuses: [200], withinMs: RATE_LIMIT_REDIS_TIMEOUT_MS + SLACK_MS },
    upload: { statuses: [201, 503], withinMs: JOB_TIMEOUT_MS + SLACK_MS },
    pdf: { statuses: [200, 503], withinMs: JOB_TIMEOUT_MS + SLACK_MS },
  },
  // A statement with no answer fails after DB_QUERY_TIMEOUT_MS; a request waits at most the acquire timeout for a connection.
  mariadb: {
    list: { statuses: [200, 503], withinMs: DB_QUERY_TIMEOUT_MS + DB_ACQUIRE_TIMEOUT_MS + SLACK_MS },
    lookup: { statuses: [200, 503], withinMs: DB_QUERY_TIMEOUT_MS + DB_ACQUIRE_TIMEOUT_MS + SLACK_MS },
    upload: { statuses: [201, 503], withinMs: Math.max(JOB_TIMEOUT_MS, DB_QUERY_TIMEOUT_MS + DB_ACQUIRE_TIMEOUT_MS) + SLACK_MS },
    pdf: { statuses: [200, 503], withinMs: Math.max(JOB_TIMEOUT_MS, DB_QUERY_TIMEOUT_MS + DB_ACQUIRE_TIMEOUT_MS) + SLACK_MS },
  },
  // Lists never touch storage; a file that cannot be staged is failed (422 when none was stored); a PDF is 503 by its deadline
  // plus the one storage request (the removal of its result) that follows it.
  s3: {
    list: { statuses: [200], withinMs: SLACK_MS },
    lookup: { statuses: [200], withinMs: SLACK_MS },
    upload: { statuses: [201, 422, 503], withinMs: JOB_TIMEOUT_MS + S3_REQUEST_TIMEOUT_MS + SLACK_MS },
    pdf: { statuses: [200, 503], withinMs: JOB_TIMEOUT_MS + S3_REQUEST_TIMEOUT_MS + SLACK_MS },
  },
};

let stack: PrivateStack;
let api: TestApi;
let worker: WorkerProcess;
let workerDir: string;
/** Names of the files the API reported stored (201 `uploaded`), across the whole file. */
const reportedStored: string[] = [];

async function timed(kind: Kind, request: () => Promise<Response>): Promise<Outcome> {
  const started = Date.now();
  const response = await request();
  const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
  const body = isJson ? await envelopeOf(response) : Buffer.from(await response.arrayBuffer());
  const outcome = { kind, status: response.status, ms: Date.now() - started, retryAfter: response.headers.get('retry-after'), body };
  if (kind === 'upload' && response.status === 201) {
    reportedStored.push(...(body as { data: { uploaded: Array<{ name: string }> } }).data.uploaded.map((file) => file.name));
  }
  return outcome;
}

/** Each file's bytes are its own (a PDF with its name in a comment), so that no upload is answered from an earlier file's bytes. */
function upload(names: string[]) {
  const parts = names.map((filename) => ({ name: 'files', filename, content: Buffer.concat([PDF_BYTES, Buffer.from(`% ${filename}\n`)]) }));
  const { body, contentType } = multipart(parts);
  return api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } });
}

let batch = 0;
/** One of each kind of request at once; file names are unique across the file. */
function traffic(): Promise<Outcome[]> {
  batch += 1;
  return Promise.all([
    timed('list', () => api.call('/invoices?per_page=5')),
    timed('list', () => api.call('/invoices?statuses=overdue&sort_by=nr')),
    timed('lookup', () => api.call('/orders/by-nr?nr=0412')),
    timed('upload', () => upload([`a-${batch}.pdf`, `b-${batch}.pdf`])),
    timed('pdf', () => api.call('/invoices/9001/pdf?lang=de')),
  ]);
}

/** A batch already under way when the process stops, and one sent while it is stopped; resumed whatever happens. */
async function trafficWhilePaused(target: PausableProcess): Promise<Outcome[]> {
  const before = traffic();
  await target.pause();
  try {
    const during = traffic();
    return [...(await before), ...(await during)];
  } finally {
    await target.resume();
  }
}

function expectDocumentedAnswer(outcome: Outcome, expected: { statuses: number[]; withinMs: number }): void {
  const label = `${outcome.kind} answered ${outcome.status} in ${outcome.ms} ms`;
  expect(expected.statuses, label).toContain(outcome.status);
  expect(outcome.ms, label).toBeLessThanOrEqual(expected.withinMs);
  if (outcome.status === 503) {
    expect(Number(outcome.retryAfter), label).toBeGreaterThanOrEqual(1);
    expect(outcome.body, label).toEqual({ status: 503, message: 'Service Unavailable', data: null });
  }
  if (outcome.status === 422) {
    expect(outcome.body.message).toBe('No files were uploaded');
    expect(outcome.body.data.uploaded).toEqual([]);
    for (const failure of outcome.body.data.failed) expect(failure.error).toMatch(/^Storage unavailable/);
  }
  if (outcome.kind === 'pdf' && outcome.status === 200) expect((outcome.body as Buffer).subarray(0, 5).toString()).toBe('%PDF-');
}

/** Every row has its object, and every file a client was told is stored has its row: nothing half-written, nothing lost. */
async function expectNothingHalfWritten(): Promise<void> {
  const rows: Array<{ name: string; storage_key: string }> = await api.knex('order_files').select('name', 'storage_key');
  const objects = new Set(await stack.objectKeys());
  expect(rows.filter((row) => !objects.has(row.storage_key))).toEqual([]);
  const stored = new Set(rows.map((row) => row.name));
  expect(reportedStored.filter((name) => !stored.has(name))).toEqual([]);
}

beforeAll(async () => {
  stack = await PrivateStack.start();
  // Every PDF request renders (the PDF cache, where there is one, is off): a job meets the paused dependency.
  const env = { ...stack.env, JOB_TIMEOUT_MS: String(JOB_TIMEOUT_MS), DB_QUERY_TIMEOUT_MS: String(DB_QUERY_TIMEOUT_MS), PDF_CACHE_MAX_OBJECTS: '0' };
  // The embedded profile's harness with the private services in its environment: the API on them, in this process.
  api = await startTestApi(env, { profile: 'embedded' });
  workerDir = await mkdtemp(path.join(os.tmpdir(), 'paused-worker-'));
  worker = await WorkerProcess.start({ ...env, DATA_DIR: workerDir });
  const warm = await traffic();
  expect(warm.map((o) => o.status)).toEqual([200, 200, 200, 201, 200]);
}, 120_000);

afterAll(async () => {
  await worker?.kill();
  await api?.stop();
  await stack?.stop();
  if (workerDir) await rm(workerDir, { recursive: true, force: true });
});

describe.each(['redis', 'mariadb', 's3'] as const)('when %s is paused (SIGSTOP) during traffic', (dependency) => {
  it('then every request answers within its documented bound with its documented status, nothing is half-written, and after SIGCONT traffic heals with no restart', async () => {
    const target: PausableProcess = dependency === 'redis' ? stack.redis : dependency === 'mariadb' ? stack.mariadb : stack.s3;
    const outcomes = await trafficWhilePaused(target);
    for (const outcome of outcomes) expectDocumentedAnswer(outcome, EXPECTED[dependency][outcome.kind]);
    // The pause was felt (a test whose SIGSTOP did nothing must not pass).
    expect(outcomes.filter((o) => o.status === 503 || o.status === 422).length).toBeGreaterThan(0);
    console.info(`${dependency} paused:`, outcomes.map((o) => `${o.kind} ${o.status} ${o.ms}ms`).join(', '));

    const resumedAt = Date.now();
    await expect.poll(async () => (await traffic()).map((o) => o.status), { timeout: 30_000, interval: 200 }).toEqual([200, 200, 200, 201, 200]);
    console.info(`${dependency} healed ${Date.now() - resumedAt} ms after SIGCONT`);
    // Nothing was restarted: the same worker process is alive (signal 0 throws for a process that is gone).
    expect(() => process.kill(worker.pid, 0)).not.toThrow();
    await expectNothingHalfWritten();
  }, 120_000);
});
