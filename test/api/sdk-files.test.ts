import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type LogiClient } from '@logi/client';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { PDF_BYTES } from '../support/multipart.js';
import { sdkFor } from '../support/sdk-client.js';

let api: TestApi;
let sdk: LogiClient & { urls: string[] };
let content: Buffer;
let fileId: number;
beforeAll(async () => {
  api = await startTestApi({}, { label: 'sdk-files' });
  sdk = sdkFor(api, 'baltic');
  content = Buffer.concat([PDF_BYTES, Buffer.from(`sdk files ${Date.now()}\n`.repeat(200))]);
  const uploaded = await sdk.orders.uploadFiles(3005, [{ name: 'Łódź CMR.pdf', content }], { categoryId: 2 });
  fileId = uploaded.uploaded[0]!.id;
});
afterAll(async () => {
  await api?.stop();
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const readAll = async (stream: ReadableStream<Uint8Array>) => Buffer.from(await new Response(stream).arrayBuffer());

async function apiErrorOf(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('the SDK gets order files out', () => {
  it('when the files are listed, then each with its size, sniffed type and SHA-256', async () => {
    const files = await sdk.files.list(3005);
    expect(files).toEqual([
      {
        id: fileId,
        name: 'Łódź CMR.pdf',
        category_id: 2,
        size: content.length,
        content_type: 'application/pdf',
        sha256: sha256(content),
        created: expect.any(Number),
      },
    ]);
  });

  it('when a file is downloaded, then a stream of its bytes with the decoded name, type, length and ETag', async () => {
    const file = await sdk.files.download(3005, fileId);
    expect(file.body).toBeInstanceOf(ReadableStream);
    expect(await readAll(file.body)).toEqual(content);
    expect(file).toMatchObject({ fileName: 'Łódź CMR.pdf', contentType: 'application/pdf', length: content.length, etag: `"${sha256(content)}"`, range: null });
  });

  it('when a range is asked, then only those bytes, and range says where they sit; a stale If-Range gets the whole file', async () => {
    const part = await sdk.files.download(3005, fileId, { range: { start: 100, end: 199 } });
    expect(await readAll(part.body)).toEqual(content.subarray(100, 200));
    expect(part.range).toEqual({ start: 100, end: 199, size: content.length });
    const tail = await sdk.files.download(3005, fileId, { range: { start: content.length - 10 }, ifRange: `"${sha256(content)}"` });
    expect(await readAll(tail.body)).toEqual(content.subarray(content.length - 10));
    const stale = await sdk.files.download(3005, fileId, { range: { start: 0, end: 9 }, ifRange: '"0000"' });
    expect(stale.range).toBeNull();
    expect((await readAll(stale.body)).length).toBe(content.length);
  });

  it('when a link is made, then a URL that serves the bytes without credentials until expires', async () => {
    const link = await sdk.files.link(3005, fileId, { ttl: 120 });
    expect(link.expires - Math.floor(Date.now() / 1000)).toBeGreaterThan(100);
    const response = await fetch(link.url);
    expect(response.status).toBe(200);
    expect(sha256(Buffer.from(await response.arrayBuffer()))).toBe(sha256(content));
    const byDefault = await sdk.files.link(3005, fileId);
    expect(byDefault.expires - Math.floor(Date.now() / 1000)).toBeGreaterThan(890);
  });

  it("when the file is not this order's or ttl is out of range, then an ApiError with the status, message and field", async () => {
    const missing = await apiErrorOf(sdk.files.download(3001, fileId));
    expect([missing.status, missing.message]).toEqual([404, 'File not found']);
    const foreign = await apiErrorOf(sdkFor(api, 'alpine').files.list(3005));
    expect([foreign.status, foreign.message]).toEqual([404, 'Order not found']);
    const badTtl = await apiErrorOf(sdk.files.link(3005, fileId, { ttl: 0 }));
    expect(badTtl.status).toBe(422);
    expect(Object.keys(badTtl.errors ?? {})).toEqual(['ttl']);
  });
});
