import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, EventsExpiredError, ExportFailedError } from '@logi/client';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { replaceDirectoryWithFile } from '../support/break-storage.js';
import { sdkFor } from '../support/sdk-client.js';

/**
 * The SDK's export errors, embedded profile only (vitest.config.ts leaves it out of api-production): storage is broken
 * by turning the local files directory into a file. S3 faults: test/system/exports-faults.test.ts.
 */
let api: TestApi;
let dir: string;

beforeAll(async () => {
  api = await startTestApi({ EVENTS_PUBLISH_INTERVAL_MS: '50' }, { label: 'sdk-exports-errors' });
  dir = await mkdtemp(path.join(tmpdir(), 'logi-sdk-exports-errors-'));
});

afterAll(async () => {
  await api?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('SDK export errors (embedded profile)', () => {
  // Storage is broken by turning the local files directory into a file: the embedded profile only (S3 faults: test/system/exports-faults.test.ts).
  it('when an export fails (embedded profile: local storage broken), then wait throws ExportFailedError with its reason; an expired one downloads as an ApiError 410, not EventsExpiredError', async () => {
    const sdk = sdkFor(api, 'baltic');
    const restore = await replaceDirectoryWithFile(path.join(api.dataDir, 'files', 'exports'));
    let failedId: number;
    try {
      const created = await sdk.exports.create({ documents: ['cii'] });
      failedId = created.id;
      const error = await sdk.exports.wait(created.id, { intervalMs: 50 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ExportFailedError);
      expect((error as ExportFailedError).message).toBe('Storage failed.');
    } finally {
      await restore();
    }
    await sdk.exports.delete(failedId);
    await expect(sdk.exports.get(failedId)).rejects.toMatchObject({ status: 404 });

    const ok = await sdk.exports.wait((await sdk.exports.create({ documents: ['cii'] })).id, { intervalMs: 50 });
    await api.knex('exports').where({ id: ok.id }).update({ expires: 1 });
    const expired = await sdk.exports.download(ok.id, createWriteStream(path.join(dir, 'expired.zip'))).catch((caught: unknown) => caught);
    expect(expired).toBeInstanceOf(ApiError);
    expect(expired).not.toBeInstanceOf(EventsExpiredError);
    expect(expired).toMatchObject({ status: 410, message: 'Export has expired.' });
  });
});
