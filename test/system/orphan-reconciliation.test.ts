import { utimes } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnexOrderFileRepository, LocalFileStorage, MinioFileStorage } from '@logi/adapters';
import type { FileStoragePort } from '@logi/domain';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';
import { parseSamples, scrapeMetrics } from '../support/prometheus.js';

const ORPHAN = 'orders/baltic-haulage/3001/0b7f3a4e-5c1d-4e8a-9f00-000000000001';
const PAIRED = 'orders/baltic-haulage/3001/0b7f3a4e-5c1d-4e8a-9f00-000000000002';
const YOUNG_ORPHAN = 'orders/baltic-haulage/3002/0b7f3a4e-5c1d-4e8a-9f00-000000000003';
const OTHER_ORPHAN = 'orders/alpine-logistics/4001/0b7f3a4e-5c1d-4e8a-9f00-000000000004';
const REMOVED_MESSAGE = 'removed objects under orders/ that no order file row points at';

/**
 * Storage reconciliation, on local files (embedded) and on S3 (production
 * profile): an object under orders/ that no row points at and that is older
 * than the longest job deadline is removed by the API's housekeeping at
 * start; one with a row, and an orphan still young enough to belong to an
 * upload in flight, stay. The removal is counted in the logs and metrics.
 */
describe.each(['embedded', 'production'] as const)('storage reconciliation (%s profile)', (profile) => {
  let api: TestApi;
  let metricsPort: number;
  const logLines: Array<Record<string, unknown>> = [];
  const past = new Date(Date.now() - 3 * 3_600_000);

  beforeAll(async () => {
    metricsPort = await freePort();
    api = await startTestApi(
      { METRICS_PORT: String(metricsPort) },
      {
        profile,
        label: 'orphans',
        worker: false,
        logLines,
        beforeStart: async (dataDir, { knex, stack }) => {
          let storage: FileStoragePort;
          let backdate: (key: string) => Promise<void>;
          if (stack) {
            const env = stack.env;
            storage = new MinioFileStorage({
              endPoint: env.S3_ENDPOINT!,
              accessKey: env.S3_ACCESS_KEY!,
              secretKey: env.S3_SECRET_KEY!,
              bucket: env.S3_BUCKET!,
            });
            backdate = (key) => stack.s3.backdate(env.S3_BUCKET!, key, past);
          } else {
            storage = new LocalFileStorage(path.join(dataDir, 'files'));
            backdate = (key) => utimes(path.join(dataDir, 'files', ...key.split('/')), past, past);
          }
          for (const key of [ORPHAN, PAIRED, YOUNG_ORPHAN, OTHER_ORPHAN]) await storage.putBuffer(key, Buffer.from(`bytes of ${key}`), 'application/pdf');
          for (const key of [ORPHAN, PAIRED, OTHER_ORPHAN]) await backdate(key);
          // The paired object's row, as a stored upload has.
          const row = await new KnexOrderFileRepository(knex).insertOnce(
            {
              directory: 'baltic-haulage',
              orderId: 3001,
              categoryId: null,
              name: 'cmr.pdf',
              size: 10,
              contentType: 'application/pdf',
              sha256: 'a'.repeat(64),
              storageKey: PAIRED,
              createdAt: Math.floor(past.getTime() / 1000),
            },
            Date.now() + 60_000,
          );
          expect(row?.storageKey).toBe(PAIRED);
        },
      },
    );
  });

  afterAll(async () => {
    await api?.stop();
  });

  it('when the API starts, then old objects under orders/ without a row go, the paired one and a young orphan stay, and the removal is counted', async () => {
    await expect.poll(() => api.objectKeys(), { timeout: 15_000, interval: 100 }).toEqual([PAIRED, YOUNG_ORPHAN].sort());
    expect(await api.knex('order_files').where({ storage_key: PAIRED }).count({ n: '*' })).toEqual([{ n: 1 }]);

    const removedCount = async () =>
      parseSamples(await scrapeMetrics(metricsPort)).find((sample) => sample.name === 'logistics_orphan_objects_removed_total')?.value;
    await expect.poll(removedCount, { timeout: 5_000, interval: 100 }).toBe(2);

    await expect.poll(() => logLines.filter((line) => line.msg === REMOVED_MESSAGE), { timeout: 5_000, interval: 100 }).toHaveLength(1);
    const line = logLines.find((l) => l.msg === REMOVED_MESSAGE)!;
    expect(line.orphanObjectsRemoved).toBe(2);
    expect(line.level).toBe(30);
  });
});
