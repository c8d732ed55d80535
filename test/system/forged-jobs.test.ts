import { createHash, randomUUID } from 'node:crypto';
import { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAME_BY_JOB } from '@logi/adapters';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import { DIRS } from '../support/test-fixture.js';

/**
 * A forged job on the production profile (issue 35 point 7; docs/contribute/decisions/0050-job-payloads-validated.md):
 * Alpine writes a store job straight into Redis that would copy Baltic's stored file into Alpine's order. The real
 * worker process refuses it at its first try, logs it, and neither the row nor the copy appears.
 */
let api: TestApi;
let uploads: Queue;

beforeAll(async () => {
  api = await startTestApi({}, { label: 'forged-jobs', profile: 'production' });
  const env = api.stack!.env;
  uploads = new Queue(QUEUE_NAME_BY_JOB['store-order-file'], { connection: { url: env.REDIS_URL! }, prefix: env.REDIS_PREFIX! });
});
afterAll(async () => {
  await uploads?.close();
  await api?.stop();
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('a store job forged in Redis, on a real worker', () => {
  it("when it names another directory's object, then the worker refuses it at once and Alpine gets neither a row nor a copy", async () => {
    const secret = Buffer.concat([PDF_BYTES, Buffer.from(`baltic only ${randomUUID()}\n`)]);
    const { body, contentType } = multipart([{ name: 'files', filename: 'baltic.pdf', content: secret }]);
    const uploaded = await envelopeOf(await api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } }));
    expect(uploaded.status).toBe(201);
    const rows: Array<{ storage_key: string }> = await api.knex('order_files').where({ order_id: 3001 }).select('storage_key');
    const balticKey = rows[0]!.storage_key;
    const alpineKey = `orders/${DIRS.alpine}/4001/${randomUUID()}`;
    const keysBefore = await api.objectKeys();

    const forged = await uploads.add(
      'store-order-file',
      {
        directory: DIRS.alpine,
        orderId: 4001,
        categoryId: null,
        name: 'loot.pdf',
        size: secret.length,
        contentType: 'application/pdf',
        sha256: sha256(secret),
        stagingKey: balticKey,
        storageKey: alpineKey,
        requestId: 'forged',
        deadline: Date.now() + 60_000,
      },
      { attempts: 3, backoff: { type: 'fixed', delay: 10 } },
    );
    await expect.poll(() => uploads.getJobState(forged.id!), { timeout: 15_000 }).toBe('failed');
    expect((await Job.fromId(uploads, forged.id!))?.attemptsMade).toBe(1);
    const worker = api.stack!.workers[0]!;
    expect(worker.logs.find((line) => line.msg === 'job payload refused' && line.jobId === forged.id && line.queue === 'uploads')).toMatchObject({
      job: 'store-order-file',
      code: 'INVALID_JOB_PAYLOAD',
    });

    expect(await api.knex('order_files').where({ order_id: 4001 }).count({ n: '*' })).toEqual([{ n: 0 }]);
    expect(await api.objectKeys()).toEqual(keysBefore);
    const files = await envelopeOf(await api.call('/orders/4001/files', { as: 'alpine' }));
    expect(files.data).toEqual([]);
  });
});
