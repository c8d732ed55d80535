import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    api = await startTestApi({}, {
      profile: 'embedded',
      beforeStart: async (dataDir) => {
        await plant(path.join(dataDir, 'files', 'staging', 'old-upload'), true);
        await plant(path.join(dataDir, 'files', 'pdf', 'old.pdf'), true);
        await plant(path.join(dataDir, 'files', 'staging', 'fresh-upload'), false);
        await plant(path.join(dataDir, 'files', 'orders', 'baltic-haulage', '3001', 'kept-for-good'), true);
        await plant(path.join(dataDir, 'tmp', 'old.part'), true);
        await plant(path.join(dataDir, 'tmp', 'fresh.part'), false);
      },
    });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('when the API starts, then stale staged uploads, PDFs and temp files are removed, and nothing young or kept', async () => {
    await expect.poll(async () => api.objectKeys(), { timeout: 10_000 }).toEqual(['orders/baltic-haulage/3001/kept-for-good', 'staging/fresh-upload']);
    await expect.poll(async () => (await readdir(path.join(api.dataDir, 'tmp'))).sort(), { timeout: 10_000 }).toEqual(['fresh.part']);
  });
});
