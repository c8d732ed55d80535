import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKnex, loadFixtures, migrateLatest, migrateUpTo, pendingMigrations, Sha256ApiKeyHasher } from '@logi/adapters';
import { SERVICE_VERSION } from '@logi/config';
import { authHeaders, type Tenant } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';
import { materialiseRelease, type MaterialisedRelease } from '../support/previous-release.js';
import { ProductionStack } from '../support/production-stack.js';
import { PREVIOUS_RELEASE } from '../support/releases.js';
import { ServiceProcess } from '../support/service-process.js';
import { testFixture } from '../support/test-fixture.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Issue 37, point 2: the previous release's API and worker, built from git (test/support/previous-release.ts), run
 * beside this release's on one MariaDB database migrated by this release's CLI, one Redis and one S3 bucket, as during
 * a rolling upgrade (docs/operate/upgrading.md); then this release's processes stop, as in a rollback, and the
 * previous release's keep serving on the migrated schema.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const OLD = PREVIOUS_RELEASE.version;
const NEW = SERVICE_VERSION;
const run = promisify(execFile);
/** The service's configuration: none leaks in from the test run; each process gets the stack's and its own. */
const CONFIG_VARIABLES =
  /^(HOST|PORT|DATA_DIR|DATABASE_URL|DATABASE_READ_URL|DB_.*|REDIS_.*|S3_.*|METRICS_.*|DASHBOARD_.*|LOG_LEVEL|EVENTS_.*|WEBHOOK_.*|SECRETS_.*|HTTP_.*|OTEL_.*|NODE_OPTIONS|NODE_ENV|VITEST.*|API_TEST_.*)$/;
/** The upgrade notes of 1.1.0: a 1.0.0 process that adds a delivery leaves its endpoint's next due time, mended by a 1.1.0 worker's full pass within a minute. */
const FULL_PASS_MS = 60_000;
/** A claim every second at most, and whole seconds in the full pass's clock. */
const CLAIM_SLACK_MS = 3_000;

interface Api {
  version: string;
  url: string;
  process: ServiceProcess;
}

interface Worker {
  version: string;
  process: ServiceProcess;
}

let release: MaterialisedRelease;
let stack: ProductionStack;
let knex: Knex;
const dataDirs: string[] = [];
const running: ServiceProcess[] = [];
let cutover: WebhookReceiver;
let hooks: WebhookReceiver;
let oldApi: Api;
let newApi: Api;
let oldWorker: Worker;
let newWorker: Worker;
let sideStack: ProductionStack | undefined;
let sideKnex: Knex | undefined;
let cutoverRun: Promise<{ value: CutoverDelivery } | { error: unknown }> | undefined;

function serviceEnv(on: ProductionStack, dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!CONFIG_VARIABLES.test(key)) base[key] = value;
  return {
    ...base,
    ...on.env,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '100000',
    EVENTS_PUBLISH_INTERVAL_MS: '50',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ...extra,
  };
}

/** The built launcher (`pnpm start`, `pnpm worker`, `pnpm cli`) of this checkout or of the previous release's. */
function launcher(version: string, name: 'api' | 'worker' | 'cli'): { cwd: string; script: string } {
  const cwd = version === NEW ? ROOT : release.dir;
  return { cwd, script: path.join(cwd, 'packages/service', `${name}.js`) };
}

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'logi-mixed-'));
  dataDirs.push(dir);
  return dir;
}

async function startApi(version: string, on = stack): Promise<Api> {
  const port = await freePort();
  const { cwd, script } = launcher(version, 'api');
  const service = ServiceProcess.start(process.execPath, [script], { cwd, env: serviceEnv(on, await dataDir(), { PORT: String(port) }) });
  running.push(service);
  const url = `http://127.0.0.1:${port}`;
  await service.ready(`${url}/health/ready`);
  return { version, url, process: service };
}

async function startWorker(version: string, on = stack): Promise<Worker> {
  const { cwd, script } = launcher(version, 'worker');
  const service = ServiceProcess.start(process.execPath, [script], { cwd, env: serviceEnv(on, await dataDir()) });
  running.push(service);
  await vi.waitFor(
    () => {
      if (service.child.exitCode !== null) throw new Error(`the ${version} worker exited:\n${service.output.join('\n')}`);
      if (!service.logs.some((line) => line.msg === 'worker started')) throw new Error(`the ${version} worker has not started`);
    },
    { timeout: 60_000, interval: 100 },
  );
  return { version, process: service };
}

async function cliOf(version: string, args: string[]): Promise<{ code: number; output: string }> {
  const { cwd, script } = launcher(version, 'cli');
  const dir = await dataDir();
  return run(process.execPath, [script, ...args], { cwd, env: serviceEnv(stack, dir), timeout: 120_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: unknown; stdout?: string; stderr?: string }) => ({ code: Number(error.code ?? 1), output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
  );
}

function call(api: Api, pathAndQuery: string, init: RequestInit & { as?: Tenant } = {}): Promise<Response> {
  const { as = 'baltic', headers, ...rest } = init;
  return fetch(`${api.url}/v1${pathAndQuery}`, { ...rest, headers: { ...authHeaders(as), ...(headers as Record<string, string>) } });
}

async function dataOf(api: Api, pathAndQuery: string, init: RequestInit & { as?: Tenant } = {}): Promise<any> {
  const response = await call(api, pathAndQuery, init);
  const body = (await response.json()) as { status: number; data: unknown };
  if (!response.ok) throw new Error(`${api.version} ${pathAndQuery}: ${response.status} ${JSON.stringify(body)}`);
  return body.data;
}

/** What a client reads of the service: the same through every API, whichever release it is. */
const READS = [
  '/invoices',
  '/invoices?statuses=paid,overdue&sort_by=amount_gross&sort_dir=asc&per_page=2&page=2',
  '/invoices?search=0412&period=custom&date_from=2026-10-01&date_to=2026-11-30',
  '/orders/by-nr?nr=bh/2026/0412',
  '/orders/file-categories',
  '/orders/3001/files',
  '/events?after=0&limit=500',
  '/webhook-endpoints',
];

/** The worker whose log shows the job of this request completed (none while it runs). */
function renderedBy(requestId: string, workers: Worker[], job: string): string[] {
  return workers
    .filter((worker) => worker.process.logs.some((line) => line.requestId === requestId && line.job === job && line.msg === 'job completed'))
    .map((worker) => worker.version);
}

/** A PDF asked of `api`: a real PDF, and the version of the worker that rendered it. */
async function pdfThrough(api: Api, query: string, workers: Worker[]): Promise<string[]> {
  const requestId = `mixed-pdf-${randomUUID()}`;
  const response = await call(api, `/invoices/9001/pdf?${query}`, { headers: { 'X-Request-Id': requestId } });
  expect(response.status, `${api.version} API: PDF`).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/pdf');
  expect(
    Buffer.from(await response.arrayBuffer())
      .subarray(0, 5)
      .toString('latin1'),
  ).toBe('%PDF-');
  await expect.poll(() => renderedBy(requestId, workers, 'render-invoice-pdf').length).toBe(1);
  return renderedBy(requestId, workers, 'render-invoice-pdf');
}

/** An upload through `api`, read back through `other`: the id, and the version of the worker that stored it. */
async function uploadThrough(api: Api, other: Api, workers: Worker[]): Promise<{ id: number; storedBy: string[] }> {
  const requestId = `mixed-upload-${randomUUID()}`;
  const content = `delivery note ${requestId}`;
  const form = new FormData();
  form.append('files', new Blob([content]), `note-${api.version}.txt`);
  const response = await call(api, '/orders/3001/files', { method: 'POST', body: form, headers: { 'X-Request-Id': requestId } });
  const body = (await response.json()) as { data: { uploaded: Array<{ id: number; name: string }> } };
  expect(response.status, `${api.version} API: upload ${JSON.stringify(body)}`).toBe(201);
  const [stored] = body.data.uploaded;
  expect(stored!.name).toBe(`note-${api.version}.txt`);
  const download = await call(other, `/orders/3001/files/${stored!.id}`);
  expect(download.status, `${other.version} API: download of a file uploaded through ${api.version}`).toBe(200);
  expect(await download.text()).toBe(content);
  await expect.poll(() => renderedBy(requestId, workers, 'store-order-file').length).toBe(1);
  return { id: stored!.id, storedBy: renderedBy(requestId, workers, 'store-order-file') };
}

async function reads(api: Api): Promise<unknown[]> {
  return Promise.all(READS.map((read) => dataOf(api, read)));
}

/** Every event of `types` past `after`, read through `api`. */
async function eventsPast(api: Api, after: number, types: string, as: Tenant = 'baltic'): Promise<Array<{ id: number; type: string }>> {
  return ((await dataOf(api, `/events?after=${after}&limit=500&types=${types}`, { as })) as { events: Array<{ id: number; type: string }> }).events;
}

async function latestEventId(api: Api, as: Tenant = 'baltic'): Promise<number> {
  let after = 0;
  for (;;) {
    const page = (await dataOf(api, `/events?after=${after}&limit=500`, { as })) as { events: unknown[]; next_after: number };
    if (page.events.length === 0) return after;
    after = page.next_after;
  }
}

async function createEndpoint(api: Api, url: string, eventTypes: string[], as: Tenant): Promise<{ id: number; secret: string }> {
  return (await dataOf(api, '/webhook-endpoints', {
    as,
    method: 'POST',
    body: JSON.stringify({ url, event_types: eventTypes }),
    headers: { 'Content-Type': 'application/json' },
  })) as { id: number; secret: string };
}

/** The endpoint's attempts once none is pending (each event's first attempt answered). */
async function settledAttempts(api: Api, endpointId: number, count: number, as: Tenant = 'baltic'): Promise<Array<{ event_id: number; status: string }>> {
  let attempts: Array<{ event_id: number; status: string }> = [];
  await vi.waitFor(
    async () => {
      attempts = ((await dataOf(api, `/webhook-endpoints/${endpointId}/deliveries`, { as })) as { deliveries: Array<{ event_id: number; status: string }> })
        .deliveries;
      if (attempts.length < count || attempts.some((attempt) => attempt.status === 'pending')) throw new Error(`attempts so far: ${JSON.stringify(attempts)}`);
    },
    { timeout: 20_000, interval: 100 },
  );
  return attempts;
}

function deliveredIds(receiver: WebhookReceiver, secret: string, from: number): number[] {
  return receiver.requests
    .slice(from)
    .map((request) => WebhookReceiver.verify(request, secret).id)
    .sort((a, b) => a - b);
}

/** What the side run (deliveryAddedByPreviousRelease) saw. */
interface CutoverDelivery {
  eventId: number;
  /** The endpoint's next due time and its pending attempts right after the 1.0.0 API's replay. */
  left: { nextDueAt: unknown; pending: number };
  waitedMs: number;
  delivered: number[];
  attempts: Array<[number, string]>;
}

/**
 * The cost the upgrade notes of 1.1.0 name for a mixed roll: a 1.0.0 process that adds a delivery leaves its endpoint's
 * next due time as it was, and only a 1.1.0 worker's full pass (once a minute) finds it. Shown with a 1.0.0 API's replay
 * while only a 1.1.0 worker delivers, on a database, bucket and Redis prefix of its own (a 1.0.0 worker would take the
 * attempt at once): started beside the other tests, since most of it is that minute's wait.
 */
async function deliveryAddedByPreviousRelease(): Promise<CutoverDelivery> {
  const on = (sideStack = await ProductionStack.start('mixed-cutover'));
  const db = (sideKnex = createKnex({ databaseUrl: on.env.DATABASE_URL!, dataDir: os.tmpdir() }));
  await migrateLatest(db);
  await loadFixtures(db, testFixture, { hasher: new Sha256ApiKeyHasher() });
  const [api, worker] = await Promise.all([startApi(OLD, on), startWorker(NEW, on)]);
  try {
    // An event, then an endpoint that takes it: the endpoint's only attempt is the replay's.
    await db('invoices').where({ directory: 'alpine-logistics' }).update({ branch_id: 77 });
    const [changed] = await vi.waitFor(
      async () => {
        const events = await eventsPast(api, 0, 'invoice.updated', 'alpine');
        if (events.length === 0) throw new Error('not published yet');
        return events;
      },
      { timeout: 10_000, interval: 100 },
    );
    const endpoint = await createEndpoint(api, cutover.url, ['invoice.updated'], 'alpine');
    const replayedAt = Date.now();
    const replay = (await dataOf(api, `/webhook-endpoints/${endpoint.id}/replay`, {
      as: 'alpine',
      method: 'POST',
      body: JSON.stringify({ after: changed!.id - 1 }),
      headers: { 'Content-Type': 'application/json' },
    })) as { scheduled: number };
    if (replay.scheduled !== 1) throw new Error(`the replay scheduled ${replay.scheduled} attempts`);
    const row = await db<{ id: number; next_due_at: unknown }>('webhook_endpoints').where({ id: endpoint.id }).first('next_due_at');
    const pending = await db('webhook_deliveries').where({ endpoint_id: endpoint.id, status: 'pending' }).count<Array<{ n: unknown }>>({ n: '*' });
    await cutover.waitFor(1, FULL_PASS_MS + CLAIM_SLACK_MS);
    const waitedMs = Date.now() - replayedAt;
    const attempts = await settledAttempts(api, endpoint.id, 1, 'alpine');
    return {
      eventId: changed!.id,
      left: { nextDueAt: row?.next_due_at, pending: Number(pending[0]!.n) },
      waitedMs,
      delivered: deliveredIds(cutover, endpoint.secret, 0),
      attempts: attempts.map((attempt) => [attempt.event_id, attempt.status]),
    };
  } finally {
    await Promise.all([api.process.stop(), worker.process.stop()]);
  }
}

beforeAll(async () => {
  // A cold build (no cache: install from the pnpm store, tsc) takes about a minute here; its bound is the helper's.
  release = await materialiseRelease();
  console.info(`release ${OLD} (${release.commit}): ${release.built ? 'built' : 'from the cache'} in ${release.ms} ms (${release.dir})`);
  [cutover, hooks] = await Promise.all([WebhookReceiver.start(), WebhookReceiver.start()]);
  // Settled into a value now, read by the last test: a failure is reported there, never as an unhandled rejection.
  cutoverRun = deliveryAddedByPreviousRelease().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  stack = await ProductionStack.start('mixed');
  knex = createKnex({ databaseUrl: stack.env.DATABASE_URL!, dataDir: os.tmpdir() });
  // The database as the previous release left it, with data.
  await migrateUpTo(knex, PREVIOUS_RELEASE.lastMigration);
  await loadFixtures(knex, testFixture, { hasher: new Sha256ApiKeyHasher() });
  // The previous release serves; the new release's CLI migrates beside it (docs/operate/upgrading.md, step 2).
  [oldApi, oldWorker] = await Promise.all([startApi(OLD), startWorker(OLD)]);
  const migrate = await cliOf(NEW, ['db:migrate']);
  expect(migrate, migrate.output).toMatchObject({ code: 0 });
  expect(await pendingMigrations(knex)).toEqual([]);
  newApi = await startApi(NEW);
}, 16 * 60_000);

afterAll(async () => {
  await cutoverRun;
  await Promise.all(running.map((service) => service.stop()));
  await cutover?.stop();
  await hooks?.stop();
  await knex?.destroy();
  await sideKnex?.destroy();
  await stack?.stop();
  await sideStack?.stop();
  await Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true })));
}, 120_000);

describe(`release ${OLD}'s API and worker beside release ${NEW}'s on the migrated database`, () => {
  /** The endpoint of the last two tests (baltic's uploads and invoice changes). */
  let hooked: { id: number; secret: string };

  it(`when both APIs are asked the same, then lists and lookups agree, and each reports its release`, async () => {
    const live = async (api: Api) => ((await (await fetch(`${api.url}/health/live`)).json()) as { data: { version?: string } }).data.version;
    expect(await live(newApi)).toBe(NEW);
    // 1.0.0 did not report its version (CHANGELOG.md, 1.1.0).
    expect(await live(oldApi)).toBeUndefined();
    const served = await reads(newApi);
    expect(await reads(oldApi)).toEqual(served);
    expect((served[0] as { invoices: unknown[] }).invoices.length).toBeGreaterThan(3);
  });

  it(`when only ${OLD} workers run, then a PDF and an upload asked of the ${NEW} API are done by one of them`, async () => {
    expect(await pdfThrough(newApi, 'lang=pl', [oldWorker])).toEqual([OLD]);
    expect((await uploadThrough(newApi, oldApi, [oldWorker])).storedBy).toEqual([OLD]);
  });

  it(`when the workers are rolled to ${NEW}, then a PDF and an upload asked of the ${OLD} API are done by the ${NEW} worker`, async () => {
    newWorker = await startWorker(NEW);
    expect(await oldWorker.process.stop()).toBe(0);
    expect(await pdfThrough(oldApi, 'lang=de&duplicate=true', [newWorker])).toEqual([NEW]);
    expect((await uploadThrough(oldApi, newApi, [newWorker])).storedBy).toEqual([NEW]);
  });

  it(`when ${OLD} and ${NEW} workers both run, then jobs asked of either API are done, both feeds list the same events, and each is delivered once`, async () => {
    oldWorker = await startWorker(OLD);
    const workers = [oldWorker, newWorker];
    const endpoint = await createEndpoint(oldApi, hooks.url, ['order.file_attached', 'invoice.updated'], 'baltic');
    hooked = endpoint;
    const cursor = await latestEventId(newApi);
    for (const [api, other, query] of [
      [oldApi, newApi, 'lang=cs'],
      [newApi, oldApi, 'lang=ro'],
    ] as const) {
      expect(await pdfThrough(api, query, workers)).toHaveLength(1);
      expect((await uploadThrough(api, other, workers)).storedBy).toHaveLength(1);
    }
    await knex('invoices').where({ id: 9003 }).update({ branch_id: 41 });
    const types = 'order.file_attached,invoice.updated';
    const events = await vi.waitFor(
      async () => {
        const seen = await eventsPast(newApi, cursor, types);
        if (seen.length < 3) throw new Error(`events so far: ${JSON.stringify(seen)}`);
        return seen;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(events.map((event) => event.type).sort()).toEqual(['invoice.updated', 'order.file_attached', 'order.file_attached']);
    expect(await eventsPast(oldApi, cursor, types)).toEqual(events);
    const attempts = await settledAttempts(newApi, endpoint.id, events.length);
    expect(attempts.map((attempt) => attempt.status)).toEqual(events.map(() => 'succeeded'));
    expect(deliveredIds(hooks, endpoint.secret, 0)).toEqual(events.map((event) => event.id).sort((a, b) => a - b));
  }, 60_000);

  it(`when the ${NEW} processes stop (a rollback), then ${OLD}'s keep serving on the migrated schema, and a restarted ${OLD} API says the schema is newer and serves`, async () => {
    const restarted = await startApi(OLD);
    const warning = restarted.process.logs.find((line) => line.msg === 'could not read the schema version at start; /health/ready reports the database');
    expect(JSON.stringify(warning?.err)).toMatch(/migration directory is corrupt, the following files are missing: .*021-webhook-next-due/);
    const served = await reads(newApi);
    expect(await newApi.process.stop()).toBe(0);
    expect(await newWorker.process.stop()).toBe(0);
    // What the new API served last, the previous release serves now, through the API that ran all along and the restarted one.
    expect(await reads(oldApi)).toEqual(served);
    expect(await reads(restarted)).toEqual(served);
    const cursor = await latestEventId(oldApi);
    const before = hooks.requests.length;
    expect(await pdfThrough(restarted, 'lang=tr', [oldWorker])).toEqual([OLD]);
    expect((await uploadThrough(restarted, oldApi, [oldWorker])).storedBy).toEqual([OLD]);
    await knex('invoices').where({ id: 9004 }).update({ branch_id: 42 });
    const types = 'order.file_attached,invoice.updated';
    const events = await vi.waitFor(
      async () => {
        const seen = await eventsPast(restarted, cursor, types);
        if (seen.length < 2) throw new Error(`events so far: ${JSON.stringify(seen)}`);
        return seen;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(events.map((event) => event.type).sort()).toEqual(['invoice.updated', 'order.file_attached']);
    expect(await eventsPast(oldApi, cursor, types)).toEqual(events);
    const attempts = await settledAttempts(oldApi, hooked.id, 5);
    expect(attempts.filter((attempt) => attempt.event_id > cursor).map((attempt) => attempt.status)).toEqual(['succeeded', 'succeeded']);
    expect(deliveredIds(hooks, hooked.secret, before)).toEqual(events.map((event) => event.id).sort((a, b) => a - b));
    // The previous release's CLI refuses to migrate a schema it does not know, and changes nothing.
    const migrations = await knex('knex_migrations').count({ n: '*' });
    const refused = await cliOf(OLD, ['db:migrate']);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/migration directory is corrupt/);
    expect(await knex('knex_migrations').count({ n: '*' })).toEqual(migrations);
  }, 90_000);

  it(
    `when a ${OLD} API adds a delivery while only ${NEW} workers deliver, then it waits for their full pass, at most a minute (the upgrade notes' cost), and arrives once`,
    async () => {
      const outcome = await cutoverRun!;
      if ('error' in outcome) throw outcome.error;
      const { eventId, left, waitedMs, delivered, attempts } = outcome.value;
      console.info(`a delivery added by ${OLD}, delivered by ${NEW} after ${waitedMs} ms`);
      // What 1.0.0 leaves: the attempt pending and due, its endpoint's next due time not brought forward.
      expect(left).toEqual({ nextDueAt: null, pending: 1 });
      expect(waitedMs).toBeLessThanOrEqual(FULL_PASS_MS + CLAIM_SLACK_MS);
      expect(delivered).toEqual([eventId]);
      expect(attempts).toEqual([[eventId, 'succeeded']]);
    },
    FULL_PASS_MS + 30_000,
  );
});
