import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Tokens } from '@logi/api';
import type { FileStoragePort } from '@logi/domain';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES, type Part } from '../support/multipart.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ UPLOAD_MAX_FILES: '3' }, { label: 'duplicates' });
});
afterAll(async () => {
  await api?.stop();
});
const storage = () => api.container.get<FileStoragePort>(Tokens.FileStorage);
beforeEach(async () => {
  await api.knex('order_files').delete();
  for (const key of await api.objectKeys()) await storage().delete(key);
});

const fresh = (label: string) => Buffer.concat([PDF_BYTES, Buffer.from(`${label} ${randomBytes(8).toString('hex')}`)]);

async function upload(orderId: number, parts: Part[]) {
  const { body, contentType } = multipart(parts);
  const response = await api.call(`/orders/${orderId}/files`, { method: 'POST', body, headers: { 'Content-Type': contentType } });
  return { status: response.status, body: await envelopeOf(response) };
}

async function stored() {
  const rows = (await api.knex('order_files').select('id', 'order_id', 'name', 'category_id', 'storage_key').orderBy('id')) as Array<{
    id: number;
    order_id: number;
    name: string;
    category_id: number | null;
    storage_key: string;
  }>;
  const temp = await readdir(path.join(api.dataDir, 'tmp')).catch(() => []);
  return { rows, objects: await api.objectKeys(), temp };
}

describe('POST /orders/{id}/files with bytes the order already has', () => {
  it('when a file with the same bytes is already attached to the order, then its item names the existing file and nothing is stored for it', async () => {
    const content = fresh('cmr');
    const first = await upload(3001, [
      { name: 'files', filename: 'cmr.pdf', content },
      { name: 'category_id', content: '1' },
    ]);
    expect(first.status).toBe(201);
    const existing = first.body.data.uploaded[0].id as number;
    expect(first.body.data.uploaded[0]).toEqual({ id: existing, name: 'cmr.pdf', category_id: 1 });

    const again = await upload(3001, [
      { name: 'files', filename: 'cmr-scan-again.pdf', content },
      { name: 'files', filename: 'note.pdf', content: fresh('note') },
      { name: 'category_id', content: '2' },
    ]);
    expect(again.status).toBe(201);
    expect(again.body.message).toBe('Files uploaded (1 already attached)');
    expect(again.body.data.message).toBe('Files uploaded (1 already attached)');
    expect(again.body.data.uploaded[0]).toEqual({ id: existing, name: 'cmr-scan-again.pdf', category_id: 1, duplicate_of: existing });
    expect(again.body.data.uploaded[1]).toEqual({ id: expect.any(Number), name: 'note.pdf', category_id: 2 });
    expect(again.body.data.failed).toEqual([]);

    const after = await stored();
    expect(after.rows.map((r) => [r.name, r.category_id])).toEqual([
      ['cmr.pdf', 1],
      ['note.pdf', 2],
    ]);
    // One object per row, none staged, no temp file.
    expect(after.objects).toEqual(after.rows.map((r) => r.storage_key).sort());
    expect(after.temp).toEqual([]);
  });

  it('when two parts of one request have the same bytes, then the first is stored once and the second names it', async () => {
    const content = fresh('twice');
    const answer = await upload(3001, [
      { name: 'files', filename: 'a.pdf', content },
      { name: 'files', filename: 'b.pdf', content },
    ]);
    expect(answer.status).toBe(201);
    const [a, b] = answer.body.data.uploaded as Array<Record<string, unknown>>;
    expect(a).toEqual({ id: expect.any(Number), name: 'a.pdf', category_id: null });
    expect(b).toEqual({ id: a!.id, name: 'b.pdf', category_id: null, duplicate_of: a!.id });
    expect(answer.body.message).toBe('Files uploaded (1 already attached)');
    const after = await stored();
    expect(after.rows).toHaveLength(1);
    expect(after.objects).toEqual([after.rows[0]!.storage_key]);
  });

  it('when the same bytes go to another order, then they are stored as usual, without duplicate_of', async () => {
    const content = fresh('across');
    expect((await upload(3001, [{ name: 'files', filename: 'cmr.pdf', content }])).status).toBe(201);
    const other = await upload(3002, [{ name: 'files', filename: 'cmr.pdf', content }]);
    expect(other.status).toBe(201);
    expect(other.body.message).toBe('Files uploaded');
    expect(other.body.data.uploaded[0]).toEqual({ id: expect.any(Number), name: 'cmr.pdf', category_id: null });
    const after = await stored();
    expect(after.rows.map((r) => r.order_id)).toEqual([3001, 3002]);
    expect(after.objects).toHaveLength(2);
  });

  it('when only duplicates are sent, then the answer is 201 naming the existing files and storage is unchanged', async () => {
    const content = fresh('only');
    const first = await upload(3001, [{ name: 'files', filename: 'cmr.pdf', content }]);
    const before = await stored();
    const again = await upload(3001, [{ name: 'files', filename: 'cmr.pdf', content }]);
    expect(again.status).toBe(201);
    const id = first.body.data.uploaded[0].id;
    expect(again.body.data).toEqual({
      message: 'Files uploaded (1 already attached)',
      order_id: 3001,
      uploaded: [{ id, name: 'cmr.pdf', category_id: null, duplicate_of: id }],
      failed: [],
    });
    expect(await stored()).toEqual(before);
  });
});
