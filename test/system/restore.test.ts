import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Knex } from 'knex';
import { Client } from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnex } from '@logi/adapters';
import { envWithoutOtel } from '../support/api-process.js';
import { freePort } from '../support/free-port.js';
import { ProductionStack } from '../support/production-stack.js';
import { S3RVER_ACCESS_KEY, S3RVER_SECRET_KEY } from '../support/s3rver.js';
import { ServiceProcess } from '../support/service-process.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Issue 37, point 1: docs/operate/backup-and-restore.md followed as an
 * operator follows it, on the production profile (MariaDB, Redis, an S3
 * server, the built API, worker and CLI of `pnpm build`). The demo data is
 * loaded, a client follows the feed (cursor A) and a webhook endpoint
 * receives events; the database is dumped with `mariadb-dump
 * --single-transaction`, then the bucket is copied; more is written (a file
 * between the two backups, then more files and changes) and a second client
 * follows past the backup's end (cursor B). Then the database and the bucket
 * are lost and restored, `db:after-restore` runs (it also removes the
 * Idempotency-Key answers Redis kept) and the service starts again. About 10 s.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const DEMO = { Authorization: 'Bearer demo-key-baltic', 'X-Client-Directory': 'baltic-haulage' };
const ORDER = 3001;
const RESTORED = { status: 410, message: 'This cursor is from before a restore; resynchronise.', data: null };
const LOST_ENDPOINT_KEY = randomUUID();
const ORPHANS_REMOVED = 'removed objects under orders/ that no order file row points at';

interface FeedEvent {
  id: number;
  type: string;
  data: { object: Record<string, unknown> };
}
interface FeedPage {
  events: FeedEvent[];
  has_more: boolean;
  next_after: number;
}

let stack: ProductionStack;
let dataDir: string;
let backupDir: string;
let db: Knex;
let database: string;
let receiver: WebhookReceiver;
let api: ServiceProcess;
let worker: ServiceProcess;
let base: string;

function serviceEnv(): Record<string, string> {
  return {
    ...(envWithoutOtel() as Record<string, string>),
    ...stack.env,
    DATA_DIR: dataDir,
    CHROMIUM_PATH: '/usr/bin/chromium',
    LOG_LEVEL: 'info',
    EVENTS_PUBLISH_INTERVAL_MS: '50',
  };
}

/** `pnpm cli <args>`: the built CLI (packages/service/cli.js), run to its end. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'packages/service/cli.js'), ...args],
      { cwd: ROOT, env: serviceEnv(), timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A MariaDB client program (`mariadb-dump`, `mariadb`) with stdin and stdout from and to files; rejects on a non-zero exit. */
function mariadbTool(command: string, args: string[], io: { stdin?: string; stdout?: string } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, ['--host=127.0.0.1', '--port=3306', '--user=root', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const piped: Array<Promise<void>> = [];
    if (io.stdout) piped.push(pipeline(child.stdout, createWriteStream(io.stdout)));
    else child.stdout.resume();
    if (io.stdin) piped.push(pipeline(createReadStream(io.stdin), child.stdin));
    else child.stdin.end();
    child.once('error', reject);
    child.once('exit', (code) => {
      void Promise.all(piped).then(() => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${stderr}`))), reject);
    });
  });
}

/** The API and a worker, as `pnpm start` and `pnpm worker` run them; resolves once both are ready. */
async function startService(): Promise<void> {
  const [port, workerMetrics] = await Promise.all([freePort(), freePort()]);
  const env = serviceEnv();
  api = ServiceProcess.start(process.execPath, [path.join(ROOT, 'packages/service/api.js')], {
    cwd: ROOT,
    env: { ...env, HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: '0' },
  });
  worker = ServiceProcess.start(process.execPath, [path.join(ROOT, 'packages/service/worker.js')], {
    cwd: ROOT,
    env: { ...env, METRICS_HOST: '127.0.0.1', METRICS_PORT: String(workerMetrics) },
  });
  base = `http://127.0.0.1:${port}/v1`;
  await Promise.all([api.ready(`http://127.0.0.1:${port}/health/ready`), worker.ready(`http://127.0.0.1:${workerMetrics}/health/ready`)]);
}

async function stopService(): Promise<void> {
  const codes = await Promise.all([api.stop(), worker.stop()]);
  expect(codes).toEqual([0, 0]);
}

async function call(
  pathAndQuery: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; body: { status: number; message: string; data: any } }> {
  const response = await fetch(`${base}${pathAndQuery}`, { ...init, headers: { ...DEMO, ...(init.headers as Record<string, string>) } });
  return { status: response.status, headers: response.headers, body: (await response.json()) as { status: number; message: string; data: any } };
}

/** One page of the feed after `cursor`; `wait` long-polls. */
async function feed(cursor: number, wait = 0): Promise<{ status: number; body: { status: number; message: string; data: any }; page: FeedPage }> {
  const answer = await call(`/events?after=${cursor}&limit=500${wait ? `&wait=${wait}` : ''}`);
  return { ...answer, page: answer.body.data as FeedPage };
}

/** A client following the feed from `cursor` until it has seen `count` events more (long polls); gives them and its cursor. */
async function follow(cursor: number, count: number): Promise<{ events: FeedEvent[]; cursor: number }> {
  const events: FeedEvent[] = [];
  const deadline = Date.now() + 30_000;
  while (events.length < count) {
    if (Date.now() > deadline) throw new Error(`the feed gave ${events.length} of ${count} events after ${cursor}`);
    const { status, body, page } = await feed(cursor, 5);
    if (status !== 200) throw new Error(`the feed answered ${status}: ${JSON.stringify(body)}`);
    events.push(...page.events);
    cursor = page.next_after;
  }
  return { events, cursor };
}

/** A client reading the feed to its end (once nothing waits to be published). */
async function readToEnd(cursor: number): Promise<{ events: FeedEvent[]; cursor: number }> {
  await expect.poll(() => db('event_pending').count({ n: '*' }).first(), { timeout: 30_000, interval: 100 }).toEqual({ n: 0 });
  const events: FeedEvent[] = [];
  for (;;) {
    const { status, page } = await feed(cursor);
    expect(status).toBe(200);
    events.push(...page.events);
    cursor = page.next_after;
    if (!page.has_more) return { events, cursor };
  }
}

/** Uploads a PDF of its own bytes to the demo order; gives the file's id. */
async function upload(name: string): Promise<number> {
  const bytes = Buffer.concat([await readFile(path.join(ROOT, 'fixtures/samples/cmr.pdf')), Buffer.from(`\n% ${randomUUID()}\n`)]);
  const form = new FormData();
  form.append('category_id', '1');
  form.append('files', new Blob([bytes], { type: 'application/pdf' }), name);
  const { status, body } = await call(`/orders/${ORDER}/files`, { method: 'POST', body: form });
  expect([status, body.data.uploaded.map((file: { name: string }) => file.name)]).toEqual([201, [name]]);
  return body.data.uploaded[0].id as number;
}

/** What another system writing the table straight does (an ERP marking an invoice paid): an invoice.updated event. */
async function markPaid(invoiceId: number): Promise<void> {
  expect(await db('invoices').where({ id: invoiceId }).update({ status: 'paid', left_to_pay: 0 })).toBe(1);
}

async function storageKeyOf(fileId: number): Promise<string> {
  const row = await db<{ id: number; storage_key: string }>('order_files').where({ id: fileId }).first('storage_key');
  return row!.storage_key;
}

/** POST /v1/webhook-endpoints for the receiver, with an Idempotency-Key when given. */
function createEndpoint(eventTypes?: string[], idempotencyKey?: string) {
  return call('/webhook-endpoints', {
    method: 'POST',
    body: JSON.stringify({ url: receiver.url, ...(eventTypes ? { event_types: eventTypes } : {}) }),
    headers: { 'Content-Type': 'application/json', ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) },
  });
}

function bucketClient(): Client {
  return new Client({
    endPoint: '127.0.0.1',
    port: Number(new URL(stack.s3.endPoint).port),
    useSSL: false,
    accessKey: S3RVER_ACCESS_KEY,
    secretKey: S3RVER_SECRET_KEY,
    pathStyle: true,
  });
}

/** The files' backup: every object of the bucket copied to a directory (what `aws s3 sync s3://bucket dir` does). */
async function copyBucket(dir: string): Promise<string[]> {
  const client = bucketClient();
  const keys = await stack.objectKeys();
  for (const key of keys) {
    const file = path.join(dir, ...key.split('/'));
    await mkdir(path.dirname(file), { recursive: true });
    await pipeline(await client.getObject(stack.env.S3_BUCKET!, key), createWriteStream(file));
  }
  return keys;
}

/** The files' restore into the (emptied) bucket: every object of the copy put back. */
async function restoreBucket(dir: string): Promise<void> {
  const client = bucketClient();
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const entry of entries.filter((e) => e.isFile())) {
    const file = path.join(entry.parentPath, entry.name);
    const bytes = await readFile(file);
    await client.putObject(stack.env.S3_BUCKET!, path.relative(dir, file).split(path.sep).join('/'), bytes, bytes.length);
  }
}

async function emptyBucket(): Promise<void> {
  const client = bucketClient();
  for (const key of await stack.objectKeys()) await client.removeObject(stack.env.S3_BUCKET!, key);
  expect(await stack.objectKeys()).toEqual([]);
}

/** What the story below records as it goes. */
const seen = {
  cursorA: 0,
  cursorB: 0,
  /** The highest event id a client or a webhook was ever handed before the loss. */
  highestHandedOut: 0,
  /** Webhook ids the receiver got before the loss. */
  deliveredBefore: new Set<string>(),
  receivedBeforeRestart: 0,
  restoredEnd: 0,
  firstNewId: 0,
  keptFile: { id: 0, key: '' },
  orphanKey: '',
  lostKey: '',
};
let secret: string;
/** Demo invoices of the client that are not paid yet: marking one paid is a change its feed shows. */
let unpaid: number[];

beforeAll(async () => {
  stack = await ProductionStack.start('restore');
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-restore-data-'));
  backupDir = await mkdtemp(path.join(os.tmpdir(), 'logi-restore-backup-'));
  database = new URL(stack.env.DATABASE_URL!).pathname.slice(1);
  db = createKnex({ databaseUrl: stack.env.DATABASE_URL!, dataDir });
  receiver = await WebhookReceiver.start();
  const loaded = await cli(['fixtures:load', path.join(ROOT, 'fixtures/demo.json')]);
  expect(loaded, loaded.stderr).toMatchObject({ code: 0 });
  const rows = await db<{ id: number; directory: string; status: string }>('invoices')
    .where({ directory: 'baltic-haulage' })
    .whereNot({ status: 'paid' })
    .orderBy('id')
    .limit(4)
    .select('id');
  unpaid = rows.map((row) => row.id);
  expect(unpaid).toHaveLength(4);
  // The receiver listens on 127.0.0.1: the operator allows private targets for this client.
  const allowed = await cli(['webhooks:allow-private', '--directory', 'baltic-haulage']);
  expect(allowed, allowed.stderr).toMatchObject({ code: 0 });
  await startService();
}, 120_000);

afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await receiver?.stop();
  await db?.destroy();
  await stack?.stop();
  await rm(dataDir, { recursive: true, force: true });
  await rm(backupDir, { recursive: true, force: true });
});

describe('a backup restored as docs/operate/backup-and-restore.md says (MariaDB, S3, the built service)', { timeout: 120_000 }, () => {
  it('when the operator backs up, more is written, and the database and files are restored and db:after-restore runs, then it names the restored end and a first new id past every id handed out', async () => {
    // Before the backup: the demo data's events, read by client A; an endpoint that receives what follows.
    await expect.poll(() => db('event_pending').count({ n: '*' }).first(), { timeout: 30_000, interval: 100 }).toEqual({ n: 0 });
    const created = await createEndpoint();
    expect(created.status).toBe(201);
    secret = created.body.data.secret as string;
    const keptFileId = await upload('kept.pdf');
    seen.keptFile = { id: keptFileId, key: await storageKeyOf(keptFileId) };
    await markPaid(unpaid[0]!);
    const clientA = await readToEnd(0);
    expect(clientA.events.slice(-2).map((event) => [event.type, event.data.object.id])).toEqual([
      ['order.file_attached', keptFileId],
      ['invoice.updated', unpaid[0]],
    ]);
    seen.cursorA = clientA.cursor;
    await receiver.waitFor(2);
    // Nothing in flight when the dump is taken: the attempts of both events are recorded as sent.
    await expect.poll(() => db('webhook_deliveries').where({ status: 'pending' }).count({ n: '*' }).first(), { timeout: 30_000 }).toEqual({ n: 0 });

    // Back up: the database first (one consistent snapshot), then the files.
    const dump = path.join(backupDir, 'logistics.sql');
    await mariadbTool('mariadb-dump', ['--single-transaction', '--routines', '--triggers', database], { stdout: dump });
    const orphanFileId = await upload('after-the-dump.pdf');
    seen.orphanKey = await storageKeyOf(orphanFileId);
    const files = path.join(backupDir, 'files');
    expect(await copyBucket(files)).toEqual(expect.arrayContaining([seen.keptFile.key, seen.orphanKey]));

    // More is written after the backup, and client B follows past the backup's end. An endpoint registered
    // with an Idempotency-Key (for failed exports: it receives nothing here) is lost with the restore.
    const lostEndpoint = await createEndpoint(['export.failed'], LOST_ENDPOINT_KEY);
    expect(lostEndpoint.status).toBe(201);
    const lostFileId = await upload('after-the-backup.pdf');
    seen.lostKey = await storageKeyOf(lostFileId);
    await markPaid(unpaid[1]!);
    const clientB = await follow(seen.cursorA, 3);
    expect(clientB.events.map((event) => [event.type, event.data.object.id])).toEqual([
      ['order.file_attached', orphanFileId],
      ['order.file_attached', lostFileId],
      ['invoice.updated', unpaid[1]],
    ]);
    seen.cursorB = clientB.cursor;
    await receiver.waitFor(5);
    const delivered = receiver.requests.map((request) => WebhookReceiver.verify(request, secret).id);
    for (const request of receiver.requests) seen.deliveredBefore.add(String(request.headers['webhook-id']));
    seen.highestHandedOut = Math.max(seen.cursorB, ...delivered);
    seen.receivedBeforeRestart = receiver.requests.length;

    // The loss and the restore: stop the service, load the dump into an empty database, then the files.
    await stopService();
    await mariadbTool('mariadb', [
      '--execute',
      `DROP DATABASE IF EXISTS \`${database}\`; CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    ]);
    await emptyBucket();
    await mariadbTool('mariadb', [database], { stdin: dump });
    await restoreBucket(files);
    const afterRestore = await cli(['db:after-restore']);
    expect([afterRestore.code, afterRestore.stderr]).toEqual([0, '']);
    // The answers Redis kept for Idempotency-Key retries name rows the restore lost: the command removes them.
    expect(Number(/^Removed (\d+) Idempotency-Key answers kept in Redis/m.exec(afterRestore.stdout)?.[1])).toBeGreaterThanOrEqual(1);
    const said = /^Restored feed ends at event (\d+); new events start at (\d+)\.$/m.exec(afterRestore.stdout);
    expect(said, afterRestore.stdout).not.toBeNull();
    seen.restoredEnd = Number(said![1]);
    seen.firstNewId = Number(said![2]);
    expect(seen.restoredEnd).toBe(seen.cursorA);
    expect(seen.firstNewId).toBeGreaterThan(seen.highestHandedOut);

    // A restore's files are new to the bucket, and the housekeeping removes an orphan only past the longest job
    // deadline (an hour): the objects are dated back so that the API's run at start is past that hour.
    const past = new Date(Date.now() - 2 * 3_600_000);
    for (const key of await stack.objectKeys()) await stack.s3.backdate(stack.env.S3_BUCKET!, key, past);
    await startService();
  });

  it('then client A, at the restored end, goes on and sees every new event, each with an id past any ever handed out', async () => {
    const waiting = feed(seen.cursorA, 10);
    const newFileId = await upload('after-the-restore.pdf');
    await markPaid(unpaid[2]!);
    const first = await waiting;
    expect(first.status).toBe(200);
    const clientA = await follow(first.page.next_after, 2 - first.page.events.length);
    const events = [...first.page.events, ...clientA.events];
    expect(events.map((event) => [event.type, event.data.object.id])).toEqual([
      ['order.file_attached', newFileId],
      ['invoice.updated', unpaid[2]],
    ]);
    expect(events.every((event) => event.id >= seen.firstNewId)).toBe(true);
    expect(events[1]!.id).toBeGreaterThan(events[0]!.id);
  });

  it('then client B, past the restored end, gets 410 with the restore message, and an export gives it a fresh cursor that goes on', async () => {
    const refused = await feed(seen.cursorB);
    expect([refused.status, refused.body]).toEqual([410, RESTORED]);
    const longPoll = await feed(seen.cursorB, 5);
    expect([longPoll.status, longPoll.body]).toEqual([410, RESTORED]);

    const exported = await call('/exports', {
      method: 'POST',
      body: JSON.stringify({ filters: { search: 'FV/05/2026/0001' }, documents: ['ubl'] }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(exported.status).toBe(202);
    const cursor = exported.body.data.events_cursor as number;
    expect(cursor).toBeGreaterThanOrEqual(seen.firstNewId);
    await markPaid(unpaid[3]!);
    const clientB = await follow(cursor, 2);
    expect(clientB.events.map((event) => [event.type, event.data.object.id]).sort()).toEqual([
      ['export.succeeded', exported.body.data.id],
      ['invoice.updated', unpaid[3]],
    ]);
    expect(clientB.events.every((event) => event.id > cursor)).toBe(true);
  });

  it('then webhooks go on from the restored end: new events only, with ids no receiver has seen', async () => {
    await receiver.waitFor(seen.receivedBeforeRestart + 4);
    const after = receiver.requests.slice(seen.receivedBeforeRestart).map((request) => ({
      webhookId: String(request.headers['webhook-id']),
      event: WebhookReceiver.verify(request, secret),
    }));
    expect(after.map(({ event }) => event.type).sort()).toEqual(['export.succeeded', 'invoice.updated', 'invoice.updated', 'order.file_attached']);
    expect(after.every(({ event }) => event.id >= seen.firstNewId)).toBe(true);
    // A receiver that deduplicates by webhook-id (as the guide asks) drops none of them.
    expect(after.filter(({ webhookId }) => seen.deliveredBefore.has(webhookId))).toEqual([]);
  });

  it('then a retried request whose first answer the restore lost runs anew: its Idempotency-Key was removed with the restore', async () => {
    const retried = await createEndpoint(['export.failed'], LOST_ENDPOINT_KEY);
    expect([retried.status, retried.headers.get('idempotency-replayed')]).toEqual([201, null]);
    const endpoint = await call(`/webhook-endpoints/${retried.body.data.id}`);
    expect([endpoint.status, endpoint.body.data.event_types]).toEqual([200, ['export.failed']]);
  });

  it('then the housekeeping removes the file whose row the restore lost, and every restored row has its file', async () => {
    await expect.poll(() => api.logs.filter((line) => line.msg === ORPHANS_REMOVED).map((line) => line.orphanObjectsRemoved), { timeout: 15_000 }).toEqual([1]);
    const keys = await stack.objectKeys();
    expect(keys).not.toContain(seen.orphanKey);
    expect(keys).not.toContain(seen.lostKey);
    const rows = await db<{ storage_key: string }>('order_files').select('storage_key');
    expect(rows.map((row) => row.storage_key).filter((key) => !keys.includes(key))).toEqual([]);
    expect(rows.map((row) => row.storage_key)).toContain(seen.keptFile.key);
    const download = await fetch(`${base}/orders/${ORDER}/files/${seen.keptFile.id}`, { headers: DEMO });
    expect([
      download.status,
      Buffer.from(await download.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ]).toEqual([200, '%PDF-']);
  });
});
