import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnex } from '@logi/adapters';
import { startTestApi, type TestApi } from '../support/api-harness.js';

/** What a killed process leaves behind is removed by the API itself, at start and then periodically. */
describe('housekeeping', () => {
  let api: TestApi;
  const past = new Date(Date.now() - 3 * 3_600_000);

  async function plant(file: string, old: boolean): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, 'left behind');
    if (old) await utimes(file, past, past);
  }

  beforeAll(async () => {
    api = await startTestApi(
      {},
      {
        profile: 'embedded',
        beforeStart: async (dataDir) => {
          await plant(path.join(dataDir, 'files', 'staging', 'old-upload'), true);
          await plant(path.join(dataDir, 'files', 'pdf', 'old.pdf'), true);
          await plant(path.join(dataDir, 'files', 'staging', 'fresh-upload'), false);
          await plant(path.join(dataDir, 'files', 'orders', 'baltic-haulage', '3001', 'kept-for-good'), true);
          await plant(path.join(dataDir, 'tmp', 'old.part'), true);
          await plant(path.join(dataDir, 'tmp', 'fresh.part'), false);
          // An invoice and an order written straight into the database, as an ERP's bulk load would.
          const direct = createKnex({ databaseUrl: null, dataDir });
          try {
            const template = (await direct('invoices').where({ directory: 'baltic-haulage' }).first()) as Record<string, unknown>;
            await direct('invoices').insert({ ...template, id: 880_001, nr: 'ERP/DIRECT/880001' });
            await direct('orders').insert({ id: 880_002, directory: 'baltic-haulage', nr: 'ERP-ORDER-880002', ownnr: 'x' });
            // A stored file's object has its row; without one, an old object under orders/ is an orphan and goes.
            await direct('order_files').insert({
              directory: 'baltic-haulage',
              order_id: 3001,
              category_id: null,
              name: 'kept.pdf',
              size: 11,
              content_type: 'application/pdf',
              sha256: 'a'.repeat(64),
              storage_key: 'orders/baltic-haulage/3001/kept-for-good',
              created_at: Math.floor(past.getTime() / 1000),
            });
          } finally {
            await direct.destroy();
          }
        },
      },
    );
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('when the API starts, then stale staged uploads, PDFs and temp files are removed, and nothing young or kept', async () => {
    await expect.poll(async () => api.objectKeys(), { timeout: 10_000 }).toEqual(['orders/baltic-haulage/3001/kept-for-good', 'staging/fresh-upload']);
    await expect.poll(async () => (await readdir(path.join(api.dataDir, 'tmp'))).sort(), { timeout: 10_000 }).toEqual(['fresh.part']);
  });

  it('when rows were written straight into the database, then the API indexes them for search by itself and they are found', async () => {
    await expect.poll(async () => Number(((await api.knex('search_pending').count({ n: '*' }).first()) as { n: unknown }).n), { timeout: 10_000 }).toBe(0);
    const postings = (await api.knex('search_trigrams').count({ n: '*' }).first()) as { n: unknown };
    expect(Number(postings.n)).toBeGreaterThan(0);
    const list = await api.call('/invoices?search=DIRECT/8800');
    expect(list.status).toBe(200);
    const body = (await list.json()) as { data: { invoices: Array<{ id: number }>; pagination: { total: number } } };
    expect(body.data.invoices.map((invoice) => invoice.id)).toEqual([880_001]);
    expect(body.data.pagination.total).toBe(1);
    const order = await api.call('/orders/by-nr?nr=ORDER-8800');
    expect(order.status).toBe(200);
    expect(((await order.json()) as { data: { id: number } }).data.id).toBe(880_002);
  });
});
