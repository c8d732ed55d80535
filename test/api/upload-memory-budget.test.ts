import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FileStoragePort } from '@logi/domain';
import { Tokens } from '@logi/api';
import type { MultipartUploadReceiver } from '../../packages/api/src/uploads/multipart-upload.receiver.js';
import { authHeaders, envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, type Part } from '../support/multipart.js';

const MiB = 1024 * 1024;
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { label: 'upload-budget' });
});
afterAll(async () => {
  await api?.stop();
});
const storage = () => api.container.get<FileStoragePort>(Tokens.FileStorage);
const budget = () => api.container.get<MultipartUploadReceiver>(Tokens.UploadReceiver).streamedWrites;
/** Bytes this test holds in the budget itself, given back after each test. */
let held: Array<() => void> = [];
beforeEach(async () => {
  await api.knex('order_files').delete();
  for (const key of await api.objectKeys()) await storage().delete(key);
});
afterEach(() => {
  for (const release of held) release();
  held = [];
  vi.restoreAllMocks();
});

function upload(parts: Part[]) {
  const { body, contentType } = multipart(parts);
  return api.call('/orders/3001/files', { method: 'POST', as: 'baltic', body, headers: { 'Content-Type': contentType } });
}

/** How each file reached storage: from a temp file (putFile) or written while it arrived (beginWrite, S3 only). */
function watchPaths() {
  const putFile = vi.spyOn(storage(), 'putFile');
  const beginWrite = storage().beginWrite ? vi.spyOn(storage() as Required<FileStoragePort>, 'beginWrite') : null;
  return { temp: () => putFile.mock.calls.length, streamed: () => beginWrite?.mock.calls.length ?? 0 };
}

/** Leaves `free` bytes of the budget for the API. */
function holdAllBut(free: number): void {
  const release = budget().tryReserve(budget().limit - budget().held - free);
  expect(release).not.toBeNull();
  held.push(release!);
}

async function storedBytes(response: Response): Promise<Buffer[]> {
  expect(response.status).toBe(201);
  const uploaded = (await envelopeOf(response)).data.uploaded as Array<{ id: number }>;
  return Promise.all(
    uploaded.map(async ({ id }) => {
      const download = await api.call(`/orders/3001/files/${id}`);
      expect(download.status).toBe(200);
      return Buffer.from(await download.arrayBuffer());
    }),
  );
}

describe(`memory held by uploads written while they arrive (${PROFILE})`, () => {
  it('when the budget is spent, then each file goes through a temp file and reads back byte-identical', async () => {
    holdAllBut(0);
    const paths = watchPaths();
    const files = [randomBytes(3 * MiB), randomBytes(MiB)];
    const stored = await storedBytes(await upload(files.map((content, i) => ({ name: 'files', filename: `f${i}.bin`, content }))));
    expect(stored.map((bytes, i) => bytes.equals(files[i]!))).toEqual([true, true]);
    expect([paths.temp(), paths.streamed()]).toEqual([2, 0]);
    expect(budget().held).toBe(budget().limit);
  });

  it('when the budget has room, then files are written while they arrive (S3) and the budget is back to zero after the upload', async () => {
    const paths = watchPaths();
    const files = [randomBytes(2 * MiB), randomBytes(MiB)];
    const stored = await storedBytes(await upload(files.map((content, i) => ({ name: 'files', filename: `f${i}.bin`, content }))));
    expect(stored.map((bytes, i) => bytes.equals(files[i]!))).toEqual([true, true]);
    expect([paths.temp(), paths.streamed()]).toEqual(PROFILE === 'production' ? [0, 2] : [2, 0]);
    await vi.waitFor(() => expect(budget().held).toBe(0));
  });

  it('when an upload is refused during the read or after it, then the budget is back to zero', async () => {
    const paths = watchPaths();
    // During the read: the second file passes 10 MiB.
    const tooLarge = await upload([
      { name: 'files', filename: 'a.bin', content: randomBytes(MiB) },
      { name: 'files', filename: 'b.bin', content: Buffer.alloc(10 * MiB + 1, 7) },
    ]);
    expect(tooLarge.status).toBe(422);
    await vi.waitFor(() => expect(budget().held).toBe(0));
    // After the read: the category is not a number.
    const badCategory = await upload([
      { name: 'files', filename: 'a.bin', content: randomBytes(MiB) },
      { name: 'category_id', content: 'abc' },
    ]);
    expect(badCategory.status).toBe(422);
    await vi.waitFor(() => expect(budget().held).toBe(0));
    expect(paths.streamed()).toBe(PROFILE === 'production' ? 3 : 0);
    expect(await api.objectKeys()).toEqual([]);
  });

  it('when the client goes away mid-upload, then the budget is back to zero and nothing is stored', async () => {
    const paths = watchPaths();
    const { body, contentType } = multipart([
      { name: 'files', filename: 'a.bin', content: randomBytes(MiB) },
      { name: 'files', filename: 'b.bin', content: randomBytes(4 * MiB) },
    ]);
    const req = http.request(`${api.base}/orders/3001/files`, {
      method: 'POST',
      headers: { ...authHeaders('baltic'), 'Content-Type': contentType, 'Content-Length': String(body.length) },
    });
    req.on('error', () => undefined);
    req.write(body.subarray(0, 3 * MiB));
    // Gone once the second file is being read: on S3 it holds its bytes in the budget (the first one's PUT is over); on local disk it is in a temp file.
    if (PROFILE === 'production') await vi.waitFor(() => expect([paths.streamed(), budget().held]).toEqual([2, body.length]), { timeout: 5000 });
    else await vi.waitFor(async () => expect((await readdir(path.join(api.dataDir, 'tmp'))).length).toBeGreaterThan(0), { timeout: 5000 });
    req.destroy();
    await vi.waitFor(() => expect(budget().held).toBe(0), { timeout: 5000 });
    await vi.waitFor(async () => expect(await api.objectKeys()).toEqual([]), { timeout: 5000 });
  });

  it('when concurrent uploads hold more than the budget, then each file takes one path and all read back byte-identical', async () => {
    // 15 MiB left: each file reserves its request's length (about 8 MiB), so at most one is held at a time.
    holdAllBut(15 * MiB);
    const paths = watchPaths();
    const reserve = vi.spyOn(budget(), 'tryReserve');
    const requests = [0, 1, 2].map(() => [randomBytes(4 * MiB), randomBytes(4 * MiB)]);
    const stored = await Promise.all(
      requests.map(async (files) => storedBytes(await upload(files.map((content, i) => ({ name: 'files', filename: `f${i}.bin`, content }))))),
    );
    expect(stored.map((bytes, r) => bytes.map((b, i) => b.equals(requests[r]![i]!)))).toEqual([
      [true, true],
      [true, true],
      [true, true],
    ]);
    expect(paths.temp() + paths.streamed()).toBe(6);
    if (PROFILE === 'production') {
      expect(reserve).toHaveBeenCalledTimes(6);
      expect(reserve.mock.calls.every(([bytes]) => bytes > 8 * MiB && bytes < 9 * MiB)).toBe(true);
      expect(paths.streamed()).toBe(reserve.mock.results.filter((result) => result.value !== null).length);
    }
    await vi.waitFor(() => expect(budget().held).toBe(budget().limit - 15 * MiB));
  });
});
