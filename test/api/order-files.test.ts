import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Tokens } from '@logi/api';
import { KnexApiKeyRepository, Sha256ApiKeyHasher } from '@logi/adapters';
import { cli } from '../support/cli-runner.js';
import { DIRS } from '../support/test-fixture.js';
import type { FileStoragePort } from '@logi/domain';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES, type Part } from '../support/multipart.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { label: 'order-files' });
});
afterAll(async () => {
  await api?.stop();
});
beforeEach(async () => {
  await api.knex('order_files').delete();
  const storage = api.container.get<FileStoragePort>(Tokens.FileStorage);
  for (const key of await api.objectKeys()) await storage.delete(key);
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const fresh = (label: string) => Buffer.concat([PDF_BYTES, Buffer.from(`${label} ${randomBytes(16).toString('hex')}\n`)]);
const bytesOf = async (response: Response) => Buffer.from(await response.arrayBuffer());

async function upload(orderId: number, parts: Part[]): Promise<Array<{ id: number; name: string }>> {
  const { body, contentType } = multipart(parts);
  const response = await api.call(`/orders/${orderId}/files`, { method: 'POST', body, headers: { 'Content-Type': contentType } });
  const envelope = await envelopeOf(response);
  expect(response.status, JSON.stringify(envelope)).toBe(201);
  return envelope.data.uploaded as Array<{ id: number; name: string }>;
}

async function uploadOne(orderId: number, filename: string, content: Buffer): Promise<number> {
  return (await upload(orderId, [{ name: 'files', filename, content }]))[0]!.id;
}

async function createLink(orderId: number, fileId: number, body?: unknown) {
  const init: RequestInit = { method: 'POST' };
  if (body !== undefined) Object.assign(init, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  const response = await api.call(`/orders/${orderId}/files/${fileId}/link`, init);
  return { response, envelope: await envelopeOf(response) };
}

/** RFC 6266 / 8187: the name a client shows, `filename*` winning over `filename`. */
function nameFromDisposition(value: string | null): string | null {
  if (!value) return null;
  const extended = /filename\*=UTF-8''([^;\s]+)/i.exec(value);
  if (extended) return decodeURIComponent(extended[1]!);
  return /filename="([^"]*)"/.exec(value)?.[1] ?? null;
}

describe('GET /orders/{order_id}/files', () => {
  it('when the order has files, then they are listed oldest first with size, sniffed type and the SHA-256 of the bytes', async () => {
    const cmr = fresh('cmr');
    const note = fresh('note');
    const [first] = await upload(3001, [
      { name: 'files', filename: 'cmr.pdf', content: cmr },
      { name: 'category_id', content: '1' },
    ]);
    const [second] = await upload(3001, [{ name: 'files', filename: 'Łódź dowód.pdf', content: note, type: 'text/plain' }]);
    const response = await api.call('/orders/3001/files');
    expect(response.status).toBe(200);
    const { data } = await envelopeOf(response);
    expect(data).toEqual([
      { id: first!.id, name: 'cmr.pdf', category_id: 1, size: cmr.length, content_type: 'application/pdf', sha256: sha256(cmr), created: expect.any(Number) },
      {
        id: second!.id,
        name: 'Łódź dowód.pdf',
        category_id: null,
        size: note.length,
        content_type: 'application/pdf',
        sha256: sha256(note),
        created: expect.any(Number),
      },
    ]);
    expect(Math.abs(data[0].created - Date.now() / 1000)).toBeLessThan(120);
    expect(second!.id).toBeGreaterThan(first!.id);
  });

  it('when the order has no files, then an empty list', async () => {
    const response = await api.call('/orders/3002/files');
    expect(await envelopeOf(response)).toEqual({ status: 200, message: 'OK', data: [] });
  });

  it("when the order is another directory's, missing or not an id, then 404 Order not found", async () => {
    await uploadOne(3001, 'a.pdf', fresh('a'));
    for (const [path, as] of [
      ['/orders/4001/files', 'baltic'],
      ['/orders/3001/files', 'alpine'],
      ['/orders/999999/files', 'baltic'],
      ['/orders/abc/files', 'baltic'],
    ] as const) {
      const response = await api.call(path, { as });
      expect(await envelopeOf(response), `${as} ${path}`).toEqual({ status: 404, message: 'Order not found', data: null });
    }
  });
});

describe('GET /orders/{order_id}/files/{file_id}', () => {
  it('when the file is downloaded, then the stored bytes with type, length, ETag of the SHA-256, Accept-Ranges and the name', async () => {
    const content = fresh('cmr');
    const id = await uploadOne(3001, 'cmr 7.pdf', content);
    const response = await api.call(`/orders/3001/files/${id}`);
    expect(response.status).toBe(200);
    expect(await bytesOf(response)).toEqual(content);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-length')).toBe(String(content.length));
    expect(response.headers.get('etag')).toBe(`"${sha256(content)}"`);
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="cmr 7.pdf"');
  });

  it('when the name is not ASCII or holds a percent sign, then Content-Disposition carries it in filename* and an ASCII fallback', async () => {
    for (const name of ['Łódź – dowód dostawy.pdf', '50% (final).pdf']) {
      const id = await uploadOne(3001, name, fresh(name));
      const response = await api.call(`/orders/3001/files/${id}`);
      const disposition = response.headers.get('content-disposition');
      expect(disposition).toMatch(/^attachment; filename="[\x20-\x21\x23-\x5b\x5d-\x7e]+"; filename\*=UTF-8''/);
      expect(nameFromDisposition(disposition)).toBe(name);
      await response.arrayBuffer();
    }
  });

  it('when If-None-Match names the ETag, then 304 without a body', async () => {
    const content = fresh('etag');
    const id = await uploadOne(3001, 'e.pdf', content);
    const response = await api.call(`/orders/3001/files/${id}`, { headers: { 'If-None-Match': `"${sha256(content)}"` } });
    expect(response.status).toBe(304);
    expect(response.headers.get('etag')).toBe(`"${sha256(content)}"`);
    expect(await response.text()).toBe('');
    const other = await api.call(`/orders/3001/files/${id}`, { headers: { 'If-None-Match': '"something-else"' } });
    expect(other.status).toBe(200);
    expect(await bytesOf(other)).toEqual(content);
  });

  it('when one byte range is asked (a-b, a-, -n), then 206 with exactly those bytes and Content-Range', async () => {
    const content = fresh('ranges');
    const size = content.length;
    const id = await uploadOne(3001, 'r.pdf', content);
    for (const [range, start, end] of [
      ['bytes=0-9', 0, 9],
      ['bytes=5-5', 5, 5],
      ['bytes=20-', 20, size - 1],
      ['bytes=-7', size - 7, size - 1],
      [`bytes=10-${size + 100}`, 10, size - 1],
    ] as const) {
      const response = await api.call(`/orders/3001/files/${id}`, { headers: { Range: range } });
      expect(response.status, range).toBe(206);
      expect(response.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/${size}`);
      expect(response.headers.get('content-length'), range).toBe(String(end - start + 1));
      expect(await bytesOf(response), range).toEqual(content.subarray(start, end + 1));
    }
  });

  it('when the range starts past the end, then 416 with Content-Range bytes */size; several ranges get the whole file', async () => {
    const content = fresh('416');
    const id = await uploadOne(3001, 'r.pdf', content);
    const past = await api.call(`/orders/3001/files/${id}`, { headers: { Range: `bytes=${content.length}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${content.length}`);
    expect(await envelopeOf(past)).toEqual({ status: 416, message: 'Range Not Satisfiable', data: null });
    const several = await api.call(`/orders/3001/files/${id}`, { headers: { Range: 'bytes=0-1,4-5' } });
    expect(several.status).toBe(200);
    expect(await bytesOf(several)).toEqual(content);
  });

  it('when HEAD is sent, then the headers of GET and no body', async () => {
    const content = fresh('head');
    const id = await uploadOne(3001, 'h.pdf', content);
    const response = await api.call(`/orders/3001/files/${id}`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(content.length));
    expect(response.headers.get('etag')).toBe(`"${sha256(content)}"`);
    expect(await response.text()).toBe('');
  });

  it('when a 10 MiB file is downloaded, then every byte arrives, and a range from its middle is exact', async () => {
    const content = Buffer.concat([PDF_BYTES, randomBytes(10 * 1024 * 1024 - PDF_BYTES.length)]);
    const id = await uploadOne(3001, 'big.pdf', content);
    const whole = await api.call(`/orders/3001/files/${id}`);
    expect(whole.status).toBe(200);
    expect(sha256(await bytesOf(whole))).toBe(sha256(content));
    const middle = await api.call(`/orders/3001/files/${id}`, { headers: { Range: 'bytes=5000000-5999999' } });
    expect(middle.status).toBe(206);
    expect(sha256(await bytesOf(middle))).toBe(sha256(content.subarray(5_000_000, 6_000_000)));
  });

  it("when the file is another order's, another directory's, missing or not an id, then 404 File not found (the order first)", async () => {
    const baltic = await uploadOne(3001, 'b.pdf', fresh('b'));
    const alpine = await uploadOne(4001, 'a.pdf', fresh('a')).catch(() => null);
    expect(alpine).toBeNull();
    const cases = [
      [`/orders/3002/files/${baltic}`, 'baltic', 'File not found'],
      [`/orders/3001/files/999999`, 'baltic', 'File not found'],
      [`/orders/3001/files/x1`, 'baltic', 'File not found'],
      [`/orders/4001/files/${baltic}`, 'alpine', 'File not found'],
      [`/orders/3001/files/${baltic}`, 'alpine', 'Order not found'],
      [`/orders/999999/files/${baltic}`, 'baltic', 'Order not found'],
    ] as const;
    for (const [path, as, message] of cases) {
      for (const suffix of ['', '/link']) {
        const response = await api.call(`${path}${suffix}`, { as, method: suffix ? 'POST' : 'GET' });
        expect(await envelopeOf(response), `${as} ${path}${suffix}`).toEqual({ status: 404, message, data: null });
      }
    }
  });
});

describe('POST /orders/{order_id}/files/{file_id}/link', () => {
  it('when a link is made, then 201 with an absolute URL that serves the bytes without credentials, ranges too, until expires', async () => {
    const content = fresh('link');
    const id = await uploadOne(3001, 'Łódź link.pdf', content);
    const before = Math.floor(Date.now() / 1000);
    const { response, envelope } = await createLink(3001, id);
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(envelope.data).sort()).toEqual(['expires', 'url']);
    expect(envelope.data.expires).toBeGreaterThanOrEqual(before + 900);
    expect(envelope.data.expires).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 900);
    const url = new URL(envelope.data.url);
    if (PROFILE === 'production') expect(url.origin).toBe(new URL(api.config.s3!.endPoint).origin);
    else expect(url.href.startsWith(`${api.root}/v1/file-links/`)).toBe(true);

    const fetched = await fetch(url);
    expect(fetched.status).toBe(200);
    expect(await bytesOf(fetched)).toEqual(content);
    expect(fetched.headers.get('content-type')).toBe('application/pdf');
    expect(nameFromDisposition(fetched.headers.get('content-disposition'))).toBe('Łódź link.pdf');
    const ranged = await fetch(url, { headers: { Range: 'bytes=2-6' } });
    expect(ranged.status).toBe(206);
    expect(await bytesOf(ranged)).toEqual(content.subarray(2, 7));
  });

  it('when the ttl passes, then the link answers a 4xx', async () => {
    const id = await uploadOne(3001, 'short.pdf', fresh('short'));
    const { envelope } = await createLink(3001, id, { ttl: 1 });
    const url = envelope.data.url as string;
    expect(envelope.data.expires).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
    await expect.poll(async () => (await fetch(url)).status, { timeout: 10_000, interval: 250 }).toBeGreaterThanOrEqual(400);
    const expired = await fetch(url);
    expect(expired.status).toBe(PROFILE === 'production' ? 403 : 410);
    if (PROFILE === 'embedded') expect(await envelopeOf(expired)).toEqual({ status: 410, message: 'File link expired', data: null });
  });

  it('when the link is altered, then it is refused', async () => {
    const id = await uploadOne(3001, 'x.pdf', fresh('x'));
    const other = await uploadOne(3001, 'y.pdf', fresh('y'));
    const { envelope } = await createLink(3001, id);
    const url = new URL(envelope.data.url as string);
    if (PROFILE === 'production') {
      // s3rver checks a presigned URL's expiry and access key but not the V4 signature itself (its
      // lib/middleware/authentication.js: "V4 signatures have incomplete support"), which S3 and MinIO do:
      // here an altered credential is what can be shown refused.
      const credential = url.searchParams.get('X-Amz-Credential')!;
      url.searchParams.set('X-Amz-Credential', credential.replace(/^[^/]+/, 'SOMEONE-ELSE'));
      expect((await fetch(url)).status).toBe(403);
      return;
    }
    const token = url.pathname.split('/').at(-1)!;
    const [payload, mac] = token.split('.') as [string, string];
    // Another file id under the same signature, and a changed signature.
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as unknown[];
    claims[1] = other;
    const forged = `${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${mac}`;
    const flipped = `${payload}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'AB' : 'AA'}`;
    for (const bad of [forged, flipped, 'not-a-token', `${payload}.`]) {
      const response = await fetch(`${api.root}/v1/file-links/${bad}`);
      expect(await envelopeOf(response), bad).toEqual({ status: 403, message: 'Invalid file link', data: null });
    }
  });

  it('when the API key that made a link is revoked with keys:revoke, then its link answers 410 at once (an S3 presigned link lives its ttl); a link of another key still works', async () => {
    const hasher = new Sha256ApiKeyHasher();
    const keys = new KnexApiKeyRepository(api.knex);
    const makeKey = async (name: string) => {
      const key = hasher.generate();
      const { id } = await keys.create({
        directory: DIRS.baltic,
        name,
        keyHash: hasher.hash(key),
        scopes: ['read'],
        created: Math.floor(Date.now() / 1000),
        expires: null,
      });
      return { key, id };
    };
    const linkWith = async (key: string, fileId: number) => {
      const response = await api.call(`/orders/3001/files/${fileId}/link`, {
        as: null,
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'X-Client-Directory': DIRS.baltic },
      });
      const envelope = await envelopeOf(response);
      expect(envelope.status, JSON.stringify(envelope)).toBe(201);
      return envelope.data.url as string;
    };
    const content = fresh('revoked');
    const id = await uploadOne(3001, 'revoked.pdf', content);
    const leaked = await makeKey('leaked');
    const kept = await makeKey('kept');
    const leakedUrl = await linkWith(leaked.key, id);
    const keptUrl = await linkWith(kept.key, id);
    expect((await fetch(leakedUrl)).status).toBe(200);

    const revoked = await cli(['keys:revoke', '--directory', DIRS.baltic, '--key-id', String(leaked.id)], { DATA_DIR: api.dataDir, ...(api.stack?.env ?? {}) });
    expect(revoked.code).toBe(0);
    const afterRevoke = await fetch(leakedUrl);
    if (PROFILE === 'production') {
      // Presigned by S3, which knows nothing of API keys: the link lives its ttl (docs/integrate/files.md).
      expect(afterRevoke.status).toBe(200);
      expect(await bytesOf(afterRevoke)).toEqual(content);
    } else {
      expect(await envelopeOf(afterRevoke)).toEqual({ status: 410, message: 'File link revoked', data: null });
    }
    const stillWorks = await fetch(keptUrl);
    expect(stillWorks.status).toBe(200);
    expect(await bytesOf(stillWorks)).toEqual(content);
  });

  it('when ttl is not an integer from 1 to 604800, then 422 naming ttl; a body that is not an object is refused as on webhook endpoints', async () => {
    const id = await uploadOne(3001, 'v.pdf', fresh('v'));
    for (const ttl of [0, 604801, -5, 1.5, '60', null]) {
      const { response, envelope } = await createLink(3001, id, { ttl });
      expect(response.status, String(ttl)).toBe(422);
      expect(Object.keys(envelope.errors ?? {}), String(ttl)).toEqual(['ttl']);
    }
    const longest = await createLink(3001, id, { ttl: 604800 });
    expect(longest.response.status).toBe(201);
    expect(longest.envelope.data.expires - Math.floor(Date.now() / 1000)).toBeGreaterThan(604790);
    for (const body of [[], null, 12, 'x']) {
      const { response, envelope } = await createLink(3001, id, body);
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(envelope.errors).toEqual({ body: ['The body must be a JSON object.'] });
    }
    const text = await api.call(`/orders/3001/files/${id}/link`, { method: 'POST', body: 'ttl=5', headers: { 'Content-Type': 'text/plain' } });
    expect(text.status).toBe(415);
    const broken = await api.call(`/orders/3001/files/${id}/link`, { method: 'POST', body: '{"ttl":', headers: { 'Content-Type': 'application/json' } });
    expect(broken.status).toBe(400);
  });
});
