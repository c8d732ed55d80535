import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as pause } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';

/**
 * A client that stops reading a download for a while (a slow link, a phone put to sleep) holds the API back, and
 * the API holds back the storage response behind it. Issue 35: on S3 the body was cut once that lasted 5 s (the
 * storage client's socket inactivity timeout). The pause is the fault under test, bounded; nothing waits on a sleep.
 */
const CLIENT_PAUSE_MS = 7_000;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { label: 'slow-reader' });
});
afterAll(async () => {
  await api?.stop();
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Reads the first chunk, stops reading for `CLIENT_PAUSE_MS`, then reads the rest. */
async function readWithPause(response: Response): Promise<Buffer> {
  const reader = response.body!.getReader();
  const chunks: Buffer[] = [];
  const first = await reader.read();
  if (!first.done) chunks.push(Buffer.from(first.value));
  await pause(CLIENT_PAUSE_MS);
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    chunks.push(Buffer.from(next.value));
  }
  return Buffer.concat(chunks);
}

describe(`a download read by a client that pauses mid-body (${PROFILE})`, () => {
  it('when the client stops reading a file for longer than the storage timeout, then every byte still arrives', { timeout: 60_000 }, async () => {
    // Large enough that the pause backs up through the sockets' buffers to the storage response.
    const content = Buffer.concat([PDF_BYTES, randomBytes(9 * 1024 * 1024)]);
    const { body, contentType } = multipart([{ name: 'files', filename: 'big-scan.pdf', content }]);
    const uploaded = await envelopeOf(await api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } }));
    expect(uploaded.status).toBe(201);
    const id = (uploaded.data.uploaded as Array<{ id: number }>)[0]!.id;

    const response = await api.call(`/orders/3001/files/${id}`);
    expect(response.status).toBe(200);
    const bytes = await readWithPause(response);
    expect(bytes.length).toBe(content.length);
    expect(sha256(bytes)).toBe(sha256(content));
  });
});
