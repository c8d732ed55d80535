import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { capturedLog } from '../support/captured-log.js';
import { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BullmqJobQueue,
  BullmqJobWorker,
  ChromiumPdfRenderer,
  InlineJobQueue,
  KnexClientRepository,
  KnexInvoiceRepository,
  KnexOrderFileRepository,
  LocalFileStorage,
  QUEUE_NAME_BY_JOB,
  Sha256ApiKeyHasher,
  Sha256ContentHasher,
  loadFixtures,
} from '@logi/adapters';
import { buildJobHandlers, InvalidJobPayloadError, type JobHandlers, type JobName, type JobPayloads } from '@logi/domain';
import { openTestDatabase, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture, SOUTH } from './knex-repository.fixture.js';

/**
 * Jobs that whoever can write to Redis (or a bug) could make: each must fail for good before it reaches storage or the
 * database, on BullMQ and in-process alike, while a job the API makes still runs
 * (docs/contribute/decisions/0050-job-payloads-validated.md).
 */

const REDIS_URL = 'redis://127.0.0.1:6379';
/** South's stored file, which no job of North's may read, copy, overwrite or remove. */
const SOUTH_KEY = `orders/${SOUTH}/10/${randomUUID()}`;
const SOUTH_BYTES = Buffer.from('south freight: private CMR scan');
const NORTH_ORDER = 12;

let db: TestDatabase;
let filesDir: string;
let storage: LocalFileStorage;
let renderer: ChromiumPdfRenderer;
let handlers: JobHandlers;

const later = () => Date.now() + 60_000;

function storeJob(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    directory: NORTH,
    orderId: NORTH_ORDER,
    categoryId: 1,
    name: 'cmr.pdf',
    size: SOUTH_BYTES.length,
    contentType: 'application/pdf',
    sha256: createHash('sha256').update(SOUTH_BYTES).digest('hex'),
    storageKey: `orders/${NORTH}/${NORTH_ORDER}/${randomUUID()}`,
    requestId: 'req-forged',
    deadline: later(),
    ...overrides,
  };
}

/** Invoice 101 is North's: a render that were let through would print it and write the PDF where the job says. */
function renderJob(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    directory: NORTH,
    invoiceId: 101,
    lang: 'en',
    duplicate: false,
    pdfKey: `pdf/${randomUUID()}.pdf`,
    requestId: 'req-forged',
    deadline: later(),
    ...overrides,
  };
}

/** Forged payloads, each with what it tries. */
const FORGED: Array<{ what: string; name: JobName; data: unknown }> = [
  { what: "another directory's object as the staging key (copied into North's order)", name: 'store-order-file', data: storeJob({ stagingKey: SOUTH_KEY }) },
  { what: "another directory's key under North's directory and order", name: 'store-order-file', data: storeJob({ storageKey: SOUTH_KEY }) },
  { what: "another directory's key and directory", name: 'store-order-file', data: storeJob({ directory: SOUTH, storageKey: SOUTH_KEY }) },
  {
    what: 'a key that climbs out of its order with ..',
    name: 'store-order-file',
    data: storeJob({ storageKey: `orders/${NORTH}/${NORTH_ORDER}/../../${SOUTH}/10/${randomUUID()}` }),
  },
  {
    what: 'a key with encoded separators',
    name: 'store-order-file',
    data: storeJob({ storageKey: `orders/${NORTH}/${NORTH_ORDER}/..%2F..%2F${SOUTH}%2F10%2F${randomUUID()}` }),
  },
  { what: "a key of another order of the job's directory", name: 'store-order-file', data: storeJob({ storageKey: `orders/${NORTH}/11/${randomUUID()}` }) },
  { what: 'a directory that is a path', name: 'store-order-file', data: storeJob({ directory: `${NORTH}/../${SOUTH}` }) },
  { what: 'missing fields', name: 'store-order-file', data: { directory: NORTH, storageKey: `orders/${NORTH}/${NORTH_ORDER}/${randomUUID()}` } },
  { what: 'ids and sizes of the wrong type', name: 'store-order-file', data: storeJob({ orderId: String(NORTH_ORDER), size: [1] }) },
  { what: 'a field the API never sends', name: 'store-order-file', data: storeJob({ bucket: 'other' }) },
  { what: 'no payload at all', name: 'store-order-file', data: null },
  { what: "a PDF written over another directory's object", name: 'render-invoice-pdf', data: renderJob({ pdfKey: SOUTH_KEY }) },
  { what: 'a PDF key that climbs out of pdf/', name: 'render-invoice-pdf', data: renderJob({ pdfKey: `pdf/../${SOUTH_KEY}` }) },
  { what: 'an invoice id of the wrong type', name: 'render-invoice-pdf', data: renderJob({ invoiceId: { $gt: 0 } }) },
];

async function southUntouched(): Promise<void> {
  expect(await storage.getBuffer(SOUTH_KEY)).toEqual(SOUTH_BYTES);
}

async function northRows(): Promise<string[]> {
  const rows: Array<{ storage_key: string }> = await db.knex('order_files').where({ directory: NORTH }).select('storage_key');
  return rows.map((row) => row.storage_key);
}

beforeAll(async () => {
  db = await openTestDatabase('sqlite', 'forged_jobs');
  await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
  filesDir = await mkdtemp(path.join(os.tmpdir(), 'logi-forged-files-'));
  storage = new LocalFileStorage(filesDir);
  await storage.putBuffer(SOUTH_KEY, SOUTH_BYTES, 'application/pdf');
  await db.knex('order_files').insert({
    directory: SOUTH,
    order_id: 10,
    category_id: 1,
    name: 'south.pdf',
    size: SOUTH_BYTES.length,
    content_type: 'application/pdf',
    sha256: 'a'.repeat(64),
    storage_key: SOUTH_KEY,
    created_at: 1_763_800_000,
  });
  // Launched only by a render that got through, which none here may.
  renderer = new ChromiumPdfRenderer({ rendersPerBrowser: 10, renderTimeoutMs: 30_000, poolSize: 1 });
  handlers = buildJobHandlers({
    invoices: new KnexInvoiceRepository(db.knex),
    clients: new KnexClientRepository(db.knex),
    files: new KnexOrderFileRepository(db.knex),
    renderer,
    storage,
    hasher: new Sha256ContentHasher(),
    templateVersion: 'test',
    timeZone: 'Europe/Warsaw',
  });
});

afterAll(async () => {
  await renderer?.close();
  await db?.drop();
  if (filesDir) await rm(filesDir, { recursive: true, force: true });
});

/** A valid upload of North's: its object written at its key first, as the API does. */
async function validUpload(): Promise<JobPayloads['store-order-file']> {
  const job = storeJob() as unknown as JobPayloads['store-order-file'];
  const local = path.join(filesDir, `.upload-${randomUUID()}`);
  await writeFile(local, SOUTH_BYTES);
  await storage.putFile(job.storageKey, local, SOUTH_BYTES.length, 'application/pdf');
  await rm(local, { force: true });
  return job;
}

describe('forged jobs, in-process (InlineJobQueue)', () => {
  const refused: Array<{ jobId: string; queue: string; issues: readonly string[] }> = [];
  let queue: InlineJobQueue;

  beforeAll(() => {
    queue = new InlineJobQueue(() => handlers, { concurrency: 1, onRefused: (r) => refused.push(r) });
  });
  afterAll(async () => {
    await queue?.close();
  });

  it.each(FORGED)('when a job carries $what, then it fails as invalid and nothing is read or written', async ({ name, data }) => {
    const before = await northRows();
    const jobId = `forged-${randomUUID()}`;
    const error = await queue.runAndWait(name, data as never, { jobId, timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidJobPayloadError);
    expect(refused.find((r) => r.jobId === jobId)).toMatchObject({ queue: name, issues: expect.arrayContaining([expect.any(String)]) });
    expect(await northRows()).toEqual(before);
    await southUntouched();
    expect(renderer.stats.browsersLaunched).toBe(0);
  });

  it("when a valid upload's job runs, then its row is committed under North's order", async () => {
    const job = await validUpload();
    const result = await queue.runAndWait('store-order-file', job, { jobId: `valid-${randomUUID()}`, timeoutMs: 10_000 });
    expect(result).toEqual({ fileId: expect.any(Number) });
    expect(await northRows()).toContain(job.storageKey);
  });
});

describe('forged jobs, on BullMQ (real Redis)', () => {
  const prefix = `test-forged-${randomUUID().slice(0, 8)}`;
  const { logger, lines: logLines } = capturedLog();
  let worker: BullmqJobWorker;
  let apiQueue: BullmqJobQueue;
  const raw = new Map<JobName, Queue>();

  beforeAll(async () => {
    worker = new BullmqJobWorker({ redis: REDIS_URL, prefix, handlers, concurrency: 1, logger, closeTimeoutMs: 5_000 });
    await worker.waitUntilReady();
    apiQueue = new BullmqJobQueue({ redis: REDIS_URL, prefix, backoffMs: 20 });
    for (const name of Object.keys(QUEUE_NAME_BY_JOB) as JobName[])
      raw.set(name, new Queue(QUEUE_NAME_BY_JOB[name], { connection: { url: REDIS_URL }, prefix }));
  });

  afterAll(async () => {
    await apiQueue?.close();
    await worker?.close();
    for (const queue of raw.values()) {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it.each(FORGED)(
    'when a job written straight to Redis carries $what, then it fails at its first try and nothing is read or written',
    async ({ name, data }) => {
      const before = await northRows();
      const queue = raw.get(name)!;
      // As an intruder would add it: with tries to spare, so only the worker's refusal can stop the retries.
      const added = await queue.add(name, data, { attempts: 3, backoff: { type: 'fixed', delay: 10 } });
      await expect.poll(() => queue.getJobState(added.id!), { timeout: 10_000 }).toBe('failed');
      const failed = await Job.fromId(queue, added.id!);
      expect(failed?.attemptsMade).toBe(1);
      expect(JSON.parse(failed!.failedReason.replace(/^DomainError /, ''))).toMatchObject({ code: 'INVALID_JOB_PAYLOAD', job: name });
      const lines = logLines.filter((l) => l.jobId === added.id && l.queue === QUEUE_NAME_BY_JOB[name]);
      expect(lines.map((l) => l.msg)).toEqual(['job started', 'job payload refused']);
      expect(lines[1]).toMatchObject({ job: name, attempt: 1, code: 'INVALID_JOB_PAYLOAD', issues: expect.arrayContaining([expect.any(String)]) });
      // The rules it broke, never the values it carried.
      expect(JSON.stringify(lines)).not.toContain(SOUTH_KEY.slice(-36));
      expect(await northRows()).toEqual(before);
      await southUntouched();
      expect(renderer.stats.browsersLaunched).toBe(0);
    },
  );

  it("when a valid upload's job goes through the API's queue, then the worker commits its row", async () => {
    const job = await validUpload();
    const result = await apiQueue.runAndWait('store-order-file', job, { jobId: `valid-${randomUUID()}`, timeoutMs: 10_000 });
    expect(result).toEqual({ fileId: expect.any(Number) });
    expect(await northRows()).toContain(job.storageKey);
  });
});
