import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { replaceDirectoryWithFile } from '../support/break-storage.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';

describe('faults, embedded profile', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ CHROMIUM_PATH: '/nonexistent/chromium', JOB_TIMEOUT_MS: '5000' }, { profile: 'embedded' });
  });
  afterAll(async () => {
    await api?.stop();
  });

  const upload = () => {
    const { body, contentType } = multipart([
      // Bytes of their own per file and call: bytes the order already has would be duplicates, not stored again.
      { name: 'files', filename: 'one.pdf', content: Buffer.concat([PDF_BYTES, Buffer.from(`one ${randomUUID()}`)]) },
      { name: 'files', filename: 'two.pdf', content: Buffer.concat([PDF_BYTES, Buffer.from(`two ${randomUUID()}`)]) },
    ]);
    return api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } });
  };

  it('when file storage fails, then each file is listed as failed with a readable error, nothing is stored, and it heals by itself', async () => {
    const restore = await replaceDirectoryWithFile(path.join(api.dataDir, 'files'));
    let response: Response;
    try {
      response = await upload();
    } finally {
      await restore();
    }
    expect(response.status).toBe(422);
    const body = await envelopeOf(response);
    expect(body.message).toBe('No files were uploaded');
    expect(body.data.message).toBe('No files were uploaded');
    expect(body.data.order_id).toBe(3001);
    expect(body.data.uploaded).toEqual([]);
    expect(body.data.failed.map((f: { name: string }) => f.name)).toEqual(['one.pdf', 'two.pdf']);
    for (const failure of body.data.failed) {
      expect(failure.error).toMatch(/could not be stored|Storage unavailable/);
      expect(failure.error).not.toContain(api.dataDir);
    }
    expect(await api.knex('order_files').count({ n: '*' })).toEqual([{ n: 0 }]);

    const healed = await upload();
    expect(healed.status).toBe(201);
    expect((await envelopeOf(healed)).data.uploaded).toHaveLength(2);
  });

  it('when Chromium cannot be started, then the PDF answers 503 with Retry-After and the rest of the API keeps working', async () => {
    const started = Date.now();
    const response = await api.call('/invoices/9001/pdf');
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await envelopeOf(response)).toEqual({ status: 503, message: 'Service Unavailable', data: null });
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await api.call('/invoices?per_page=1')).status).toBe(200);
  });
});
