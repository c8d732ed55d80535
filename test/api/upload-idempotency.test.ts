import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Tokens } from '@logi/api';
import { requestFingerprint, type FileStoragePort, type IdempotencyStorePort, type ReceivedFile } from '@logi/domain';
import type { RedisIdempotencyStore } from '@logi/adapters';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { DIRS } from '../support/test-fixture.js';
import { multipart, PDF_BYTES, type Part } from '../support/multipart.js';

const DAY_MS = 24 * 60 * 60_000;
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ UPLOAD_MAX_FILES: '3' }, { label: 'idempotency' });
});
afterAll(async () => {
  await api?.stop();
});
const storage = () => api.container.get<FileStoragePort>(Tokens.FileStorage);
const store = () => api.container.get<IdempotencyStorePort>(Tokens.IdempotencyStore);
beforeEach(async () => {
  await api.knex('order_files').delete();
  for (const key of await api.objectKeys()) await storage().delete(key);
});

/** Bytes no other test sends, so no file is a duplicate of another test's. */
const fresh = (label: string) => Buffer.concat([PDF_BYTES, Buffer.from(`${label} ${randomBytes(8).toString('hex')}`)]);

function upload(orderId: number, parts: Part[], key?: string) {
  const { body, contentType } = multipart(parts);
  return api.call(`/orders/${orderId}/files`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': contentType, ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
  });
}

async function stored() {
  const rows = (await api.knex('order_files').select('id', 'order_id', 'name', 'storage_key').orderBy('id')) as Array<{ id: number; storage_key: string }>;
  const temp = await readdir(path.join(api.dataDir, 'tmp')).catch(() => []);
  return { rows, objects: await api.objectKeys(), temp };
}

describe('POST /orders/{id}/files with Idempotency-Key', () => {
  it('when a retry carries the same key and files, then it gets the same status and body with Idempotency-Replayed, and nothing is stored twice', async () => {
    const key = randomUUID();
    const parts: Part[] = [
      { name: 'files', filename: 'cmr.pdf', content: fresh('replay-a') },
      { name: 'files', filename: 'note.pdf', content: fresh('replay-b') },
      { name: 'category_id', content: '1' },
    ];
    const first = await upload(3001, parts, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    const firstBody = await envelopeOf(first);
    const after = await stored();
    expect(after.rows).toHaveLength(2);
    expect(after.objects).toEqual(after.rows.map((r) => r.storage_key).sort());

    const retry = await upload(3001, parts, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(await envelopeOf(retry)).toEqual(firstBody);
    expect(firstBody.data.uploaded.map((f: { name: string }) => f.name)).toEqual(['cmr.pdf', 'note.pdf']);
    expect(await stored()).toEqual({ ...after, temp: [] });
  });

  it.each([
    ['another order', 3002, 'cmr.pdf', 'same', '1'],
    ['other bytes', 3001, 'cmr.pdf', 'other', '1'],
    ['another file name', 3001, 'renamed.pdf', 'same', '1'],
    ['another category', 3001, 'cmr.pdf', 'same', '2'],
  ])('when the key comes back with %s, then 422 names Idempotency-Key and nothing more is stored', async (_name, orderId, filename, bytes, category) => {
    const key = randomUUID();
    const content = fresh('mismatch');
    const first = await upload(
      3001,
      [
        { name: 'files', filename: 'cmr.pdf', content },
        { name: 'category_id', content: '1' },
      ],
      key,
    );
    expect(first.status).toBe(201);
    const before = await stored();
    const other = await upload(
      orderId,
      [
        { name: 'files', filename, content: bytes === 'same' ? content : fresh('other') },
        { name: 'category_id', content: category },
      ],
      key,
    );
    expect(other.status).toBe(422);
    expect(other.headers.get('idempotency-replayed')).toBeNull();
    const body = await envelopeOf(other);
    expect(body).toEqual({
      status: 422,
      message: 'The Idempotency-Key header was already used for a different request.',
      data: null,
      errors: { 'Idempotency-Key': ['The Idempotency-Key header was already used for a different request.'] },
    });
    expect(await stored()).toEqual(before);
  });

  it.each([
    ['256 characters', 'k'.repeat(256), 'The Idempotency-Key header must not be greater than 255 characters.'],
    ['a space', 'two words', 'The Idempotency-Key header must contain only visible ASCII characters.'],
    ['a non-ASCII byte', 'key\u00e9', 'The Idempotency-Key header must contain only visible ASCII characters.'],
  ])('when the key has %s, then 422 names the header and nothing is stored', async (_name, key, message) => {
    const { body, contentType } = multipart([{ name: 'files', filename: 'cmr.pdf', content: fresh('invalid-key') }]);
    // fetch refuses non-Latin-1 header values; the bytes go as Latin-1, as a client would send them.
    const response = await api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType, 'Idempotency-Key': key } });
    expect(response.status).toBe(422);
    expect(await envelopeOf(response)).toEqual({ status: 422, message, data: null, errors: { 'Idempotency-Key': [message] } });
    expect(await stored()).toEqual({ rows: [], objects: [], temp: [] });
  });

  it('when the key is 255 visible ASCII characters, then the upload is stored and its retry replayed', async () => {
    const key = `${randomUUID()}!~`.padEnd(255, 'z');
    const parts: Part[] = [{ name: 'files', filename: 'cmr.pdf', content: fresh('long-key') }];
    expect((await upload(3001, parts, key)).status).toBe(201);
    expect((await upload(3001, parts, key)).headers.get('idempotency-replayed')).toBe('true');
    expect((await stored()).rows).toHaveLength(1);
  });

  it('when the first request still holds the key, then a retry is answered 409 with Retry-After and stores nothing; once it is let go the retry runs', async () => {
    const key = randomUUID();
    const content = fresh('held');
    const received: ReceivedFile = {
      index: 0,
      name: 'cmr.pdf',
      size: content.length,
      contentType: 'application/pdf',
      sha256: createHash('sha256').update(content).digest('hex'),
      localPath: '',
    };
    // Another API process running the same request holds the key.
    const scope = { directory: DIRS.baltic, key };
    const held = await store().claim(scope, requestFingerprint({ id: 3001, directory: scope.directory, nr: '', ownnr: '' }, null, [received]), 120_000);
    expect(held.kind).toBe('claimed');
    const retry = await upload(3001, [{ name: 'files', filename: 'cmr.pdf', content }], key);
    expect(retry.status).toBe(409);
    expect(retry.headers.get('retry-after')).toBe('1');
    expect(await envelopeOf(retry)).toEqual({
      status: 409,
      message: 'A request with this Idempotency-Key is still being processed; try again shortly.',
      data: null,
    });
    expect(await stored()).toEqual({ rows: [], objects: [], temp: [] });
    await store().release(scope, (held as { token: string }).token);
    expect((await upload(3001, [{ name: 'files', filename: 'cmr.pdf', content }], key)).status).toBe(201);
  });

  it('when the same request with one key is sent several times at once, then one runs, the others get 409 or its replay, and its files are stored once', async () => {
    const key = randomUUID();
    const parts: Part[] = [
      { name: 'files', filename: 'a.pdf', content: fresh('race-a') },
      { name: 'files', filename: 'b.pdf', content: fresh('race-b') },
    ];
    const responses = await Promise.all(Array.from({ length: 5 }, () => upload(3001, parts, key)));
    const answers = await Promise.all(
      responses.map(async (r) => ({
        status: r.status,
        replayed: r.headers.get('idempotency-replayed'),
        retryAfter: r.headers.get('retry-after'),
        body: await envelopeOf(r),
      })),
    );
    const ran = answers.filter((a) => a.status === 201 && a.replayed === null);
    expect(ran).toHaveLength(1);
    for (const other of answers.filter((a) => a !== ran[0])) {
      if (other.status === 409) expect(other.retryAfter).toBe('1');
      else expect(other).toEqual({ ...ran[0], replayed: 'true' });
    }
    // What ran says what it stored: on a loaded machine a file whose store job was not taken in time is listed as
    // failed, to be sent again, and nothing of it is kept; every file is one or the other, and stored once.
    const { uploaded, failed } = ran[0]!.body.data as { uploaded: Array<{ id: number; name: string }>; failed: Array<{ name: string; error: string }> };
    expect([...uploaded, ...failed].map((file) => file.name).sort()).toEqual(['a.pdf', 'b.pdf']);
    for (const file of failed) expect(file.error).toBe('The file could not be stored in time; nothing was kept. Send it again.');
    const after = await stored();
    expect(after.rows.map((row) => row.id)).toEqual(uploaded.map((file) => file.id).sort((a, b) => a - b));
    expect(after.objects).toEqual(after.rows.map((r) => r.storage_key).sort());
  });

  it('when the kept answer is 24 hours old, then the key is forgotten: the retry runs again and finds its file already attached', async () => {
    const key = randomUUID();
    const parts: Part[] = [{ name: 'files', filename: 'cmr.pdf', content: fresh('expiry') }];
    const first = await envelopeOf(await upload(3001, parts, key));
    const scope = { directory: DIRS.baltic, key };
    if (PROFILE === 'production') {
      const redis = api.container.get<Redis>(Tokens.Redis);
      const redisKey = (store() as RedisIdempotencyStore).redisKey(scope);
      const ttl = await redis.pttl(redisKey);
      expect(ttl).toBeGreaterThan(DAY_MS - 60_000);
      expect(ttl).toBeLessThanOrEqual(DAY_MS);
      await redis.pexpire(redisKey, 0);
    } else {
      const row = (await api.knex('idempotency_keys').where({ directory: scope.directory, idempotency_key: key }).first()) as { expires_at: number };
      expect(Number(row.expires_at) - Date.now()).toBeGreaterThan(DAY_MS - 60_000);
      expect(Number(row.expires_at) - Date.now()).toBeLessThanOrEqual(DAY_MS);
      // What the passing of a day does; the housekeeping then sweeps the row.
      await api
        .knex('idempotency_keys')
        .where({ directory: scope.directory, idempotency_key: key })
        .update({ expires_at: Date.now() - 1 });
      expect(await store().deleteExpired()).toBeGreaterThanOrEqual(1);
    }
    const later = await upload(3001, parts, key);
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotency-replayed')).toBeNull();
    const id = first.data.uploaded[0].id;
    expect((await envelopeOf(later)).data.uploaded).toEqual([{ id, name: 'cmr.pdf', category_id: null, duplicate_of: id }]);
    expect((await stored()).rows).toHaveLength(1);
  });

  it('when the key is sent by another client directory, then it is a key of its own there', async () => {
    const key = randomUUID();
    expect((await upload(3001, [{ name: 'files', filename: 'cmr.pdf', content: fresh('tenant-a') }], key)).status).toBe(201);
    const { body, contentType } = multipart([{ name: 'files', filename: 'cmr.pdf', content: fresh('tenant-b') }]);
    const other = await api.call('/orders/4001/files', {
      method: 'POST',
      as: 'alpine',
      body,
      headers: { 'Content-Type': contentType, 'Idempotency-Key': key },
    });
    expect(other.status).toBe(201);
    expect(other.headers.get('idempotency-replayed')).toBeNull();
    expect((await stored()).rows.map((r) => (r as unknown as { order_id: number }).order_id)).toEqual([3001, 4001]);
  });
});
