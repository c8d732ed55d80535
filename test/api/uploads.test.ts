import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { readdir } from 'node:fs/promises';
import type { FileStoragePort } from '@logi/domain';
import { Tokens } from '@logi/api';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authHeaders, envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES, PNG_BYTES, type Part } from '../support/multipart.js';

const MiB = 1024 * 1024;
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ UPLOAD_MAX_FILES: '3' }, { label: 'uploads' });
});
afterAll(async () => {
  await api?.stop();
});
const storage = () => api.container.get<FileStoragePort>(Tokens.FileStorage);
beforeEach(async () => {
  await api.knex('order_files').delete();
  for (const key of await api.objectKeys()) await storage().delete(key);
});

function upload(orderId: number | string, parts: Part[], as: 'baltic' | 'alpine' | null = 'baltic') {
  const { body, contentType } = multipart(parts);
  return api.call(`/orders/${orderId}/files`, { method: 'POST', as, body, headers: { 'Content-Type': contentType } });
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

async function storedState() {
  const rows = await api.knex('order_files').select('*').orderBy('id');
  const objects = await api.objectKeys();
  const temp = await filesUnder(path.join(api.dataDir, 'tmp'));
  return { rows, objects, temp };
}

/**
 * Sends `head`, then `fill` bytes for as long as the server reads them, chunked (no Content-Length):
 * a client that would never stop. Resolves with the answer and how many bytes went out before it.
 */
function endlessUpload(head: Buffer, fill: Buffer): Promise<{ status: number; body: string; connection: string | undefined; sentBytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${api.base}/orders/3001/files`, {
      method: 'POST',
      headers: {
        ...authHeaders('baltic'),
        'Content-Type': head.toString('latin1').match(/^--(\S+)/)
          ? `multipart/form-data; boundary=${head.toString('latin1').match(/^--(\S+)/)![1]}`
          : 'multipart/form-data; boundary=x',
      },
    });
    let answered = false;
    let sentBytes = head.length;
    // The server closes the connection after answering; what happens to our writes after that does not matter.
    req.on('error', (error) => (answered ? undefined : reject(error)));
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection, sentBytes }));
      res.on('error', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection, sentBytes }));
    });
    const pump = () => {
      while (!answered && !req.destroyed) {
        sentBytes += fill.length;
        if (!req.write(fill)) return void req.once('drain', pump);
      }
    };
    req.write(head);
    pump();
  });
}

describe('POST /orders/{id}/files', () => {
  it('when two files are sent with a category, then 201 lists both and each has a row and an object', async () => {
    const response = await upload(3001, [
      { name: 'files', filename: 'cmr-scan.pdf', content: PDF_BYTES, type: 'image/jpeg' },
      { name: 'files', filename: 'photo.png', content: PNG_BYTES },
      { name: 'category_id', content: '1' },
    ]);
    expect(response.status).toBe(201);
    const body = await envelopeOf(response);
    expect(body.message).toBe('Files uploaded');
    expect(body.data).toEqual({
      message: 'Files uploaded',
      order_id: 3001,
      uploaded: [
        { id: expect.any(Number), name: 'cmr-scan.pdf', category_id: 1 },
        { id: expect.any(Number), name: 'photo.png', category_id: 1 },
      ],
      failed: [],
    });
    const { rows, objects, temp } = await storedState();
    expect(rows).toHaveLength(2);
    const byName = (name: string) => rows.find((row) => row.name === name);
    expect(body.data.uploaded.map((u: { id: number }) => u.id).sort()).toEqual(rows.map((row) => row.id).sort());
    expect(byName('cmr-scan.pdf')).toMatchObject({
      directory: 'baltic-haulage',
      order_id: 3001,
      category_id: 1,
      name: 'cmr-scan.pdf',
      size: PDF_BYTES.length,
      content_type: 'application/pdf',
      sha256: createHash('sha256').update(PDF_BYTES).digest('hex'),
    });
    expect(byName('photo.png')).toMatchObject({ content_type: 'image/png', size: PNG_BYTES.length });
    expect(objects).toEqual(rows.map((row) => row.storage_key).sort());
    expect(temp).toEqual([]);
    expect(await storage().getBuffer(byName('cmr-scan.pdf').storage_key)).toEqual(PDF_BYTES);
  });

  it('when the field is named files[], then it counts as files; without a category, category_id is null', async () => {
    const response = await upload(3001, [{ name: 'files[]', filename: 'note.txt', content: 'delivery note' }]);
    expect(response.status).toBe(201);
    const body = await envelopeOf(response);
    expect(body.data.uploaded).toEqual([{ id: expect.any(Number), name: 'note.txt', category_id: null }]);
    expect((await storedState()).rows[0]).toMatchObject({ content_type: 'text/plain', category_id: null });
  });

  it.each(['', 'null', 'NULL', 'Null'])('when category_id is "%s", then there is no category', async (value) => {
    const response = await upload(3001, [
      { name: 'files', filename: 'a.pdf', content: PDF_BYTES },
      { name: 'category_id', content: value },
    ]);
    expect(response.status).toBe(201);
    expect((await envelopeOf(response)).data.uploaded[0].category_id).toBeNull();
  });

  it('when a file is exactly 10 MiB, then it is accepted', async () => {
    const response = await upload(3001, [{ name: 'files', filename: 'big.bin', content: Buffer.alloc(10 * MiB, 7) }]);
    expect(response.status).toBe(201);
    expect((await storedState()).rows[0]).toMatchObject({ size: 10 * MiB });
  });

  it('when a 10 MiB file is uploaded (held whole, then one PUT on S3), then it reads back byte-identical with its SHA-256', async () => {
    const bytes = randomBytes(10 * MiB);
    const response = await upload(3001, [{ name: 'files', filename: 'big.bin', content: bytes }]);
    expect(response.status).toBe(201);
    const id = (await envelopeOf(response)).data.uploaded[0].id as number;
    const download = await api.call(`/orders/3001/files/${id}`);
    expect(download.status).toBe(200);
    // Compared whole with Buffer.equals (toEqual walks the 10 MiB byte by byte).
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    const { rows, objects } = await storedState();
    expect(rows.map((row: { sha256: string; size: number }) => [row.sha256, row.size])).toEqual([[createHash('sha256').update(bytes).digest('hex'), 10 * MiB]]);
    // One object, and no multipart upload left incomplete beside it.
    expect(objects).toHaveLength(1);
  });

  it('when a file is 10 MiB and one byte, then 422 names files.N and nothing is stored', async () => {
    const response = await upload(3001, [
      { name: 'files', filename: 'ok.pdf', content: PDF_BYTES },
      { name: 'files', filename: 'big.bin', content: Buffer.alloc(10 * MiB + 1, 7) },
    ]);
    expect(response.status).toBe(422);
    const body = await envelopeOf(response);
    expect(body.message).toBe('The files.1 field must not be greater than 10240 kilobytes.');
    expect(body.data).toBeNull();
    expect(body.errors).toHaveProperty(['files.1']);
    expect(await storedState()).toEqual({ rows: [], objects: [], temp: [] });
  });

  it.each([
    ['no file part', [{ name: 'category_id', content: '1' }], 'The files field is required.', 'files'],
    [
      'an empty file',
      [
        { name: 'files', filename: 'a.pdf', content: PDF_BYTES },
        { name: 'files', filename: 'empty.pdf', content: '' },
      ],
      'The files.1 field must not be an empty file.',
      'files.1',
    ],
    [
      'more files than allowed',
      [0, 1, 2, 3].map((i) => ({ name: 'files', filename: `f${i}.pdf`, content: PDF_BYTES })),
      'The files field must not have more than 3 items.',
      'files',
    ],
    [
      'an unknown category',
      [
        { name: 'files', filename: 'a.pdf', content: PDF_BYTES },
        { name: 'category_id', content: '99' },
      ],
      'The selected category_id is invalid.',
      'category_id',
    ],
    [
      'a category that is not a number',
      [
        { name: 'files', filename: 'a.pdf', content: PDF_BYTES },
        { name: 'category_id', content: '1x' },
      ],
      'The category_id field must be an integer.',
      'category_id',
    ],
    [
      'category_id 0',
      [
        { name: 'files', filename: 'a.pdf', content: PDF_BYTES },
        { name: 'category_id', content: '0' },
      ],
      'The selected category_id is invalid.',
      'category_id',
    ],
    [
      'a negative category_id',
      [
        { name: 'files', filename: 'a.pdf', content: PDF_BYTES },
        { name: 'category_id', content: '-3' },
      ],
      'The selected category_id is invalid.',
      'category_id',
    ],
    [
      'category_id sent as a file part',
      [
        { name: 'files', filename: 'a.pdf', content: PDF_BYTES },
        { name: 'category_id', filename: 'c.txt', content: '1' },
      ],
      'The category_id field must be an integer.',
      'category_id',
    ],
    [
      'a files part that is not a file',
      [
        { name: 'files', filename: 'a.pdf', content: PDF_BYTES },
        { name: 'files', content: 'just text' },
      ],
      'The files.1 field must be a file.',
      'files.1',
    ],
    [
      'category_id sent twice',
      [
        { name: 'files', filename: 'a.pdf', content: PDF_BYTES },
        { name: 'category_id', content: '1' },
        { name: 'category_id', content: '2' },
      ],
      'The category_id field must be a single value.',
      'category_id',
    ],
  ] as Array<[string, Part[], string, string]>)('when %s, then 422 and nothing is stored', async (_name, parts, message, field) => {
    const response = await upload(3001, parts);
    expect(response.status).toBe(422);
    const body = await envelopeOf(response);
    expect(body.message).toBe(message);
    expect(body.data).toBeNull();
    expect(body.errors).toHaveProperty([field]);
    expect(await storedState()).toEqual({ rows: [], objects: [], temp: [] });
  });

  it('when the body is not multipart, then 422 files required', async () => {
    const response = await api.call('/orders/3001/files', {
      method: 'POST',
      body: JSON.stringify({ files: [] }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(422);
    expect((await envelopeOf(response)).message).toBe('The files field is required.');
  });

  it('when the multipart body is truncated or has a bad boundary, then 400 envelope and nothing is left', async () => {
    const { body, contentType } = multipart([{ name: 'files', filename: 'a.pdf', content: PDF_BYTES }]);
    const truncated = await api.call('/orders/3001/files', {
      method: 'POST',
      body: body.subarray(0, body.length - 30),
      headers: { 'Content-Type': contentType },
    });
    expect(truncated.status).toBe(400);
    expect(await envelopeOf(truncated)).toMatchObject({ status: 400, data: null });
    const noBoundary = await api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': 'multipart/form-data' } });
    expect(noBoundary.status).toBe(400);
    expect(await storedState()).toEqual({ rows: [], objects: [], temp: [] });
  });

  it('when the order does not exist or belongs to another client, then 404 whatever the body holds', async () => {
    for (const id of [999999, 4001, 'abc', '0', '-1', '1.5']) {
      const response = await upload(id, [{ name: 'files', filename: 'a.pdf', content: '' }]);
      expect(response.status).toBe(404);
      expect(await envelopeOf(response)).toEqual({ status: 404, message: 'Order not found', data: null });
    }
    expect((await storedState()).rows).toEqual([]);
  });

  it('when file names are hostile, then only the base name is kept and storage keys do not use them', async () => {
    const response = await upload(3001, [
      { name: 'files', filename: '../../../etc/passwd', content: PDF_BYTES },
      { name: 'files', filename: 'C:\\Users\\me\\zażółć gęślą jaźń.pdf', content: PDF_BYTES },
      { name: 'files', filename: 'tab\there.pdf', content: PDF_BYTES },
    ]);
    expect(response.status).toBe(201);
    const names = (await envelopeOf(response)).data.uploaded.map((u: { name: string }) => u.name);
    expect(names).toEqual(['passwd', 'zażółć gęślą jaźń.pdf', 'tabhere.pdf']);
    const { rows } = await storedState();
    for (const row of rows) expect(row.storage_key).toMatch(/^orders\/baltic-haulage\/3001\/[0-9a-f-]{36}$/);
  });

  it('when file names hide their order with bidirectional or zero-width controls or come decomposed, then the stored name has none of them, in NFC', async () => {
    const sent = ['invoice\u202Etxt.exe', '\u2066re\u200Bport\u2069\uFEFF.pdf', 'Cafe\u0301 Zu\u0308rich.pdf'];
    const response = await upload(
      3001,
      sent.map((filename, i) => ({ name: 'files', filename, content: Buffer.concat([PDF_BYTES, Buffer.from(`% part ${i}\n`)]) })),
    );
    expect(response.status).toBe(201);
    const kept = ['invoicetxt.exe', 'report.pdf', 'Caf\u00e9 Z\u00fcrich.pdf'];
    expect((await envelopeOf(response)).data.uploaded.map((u: { name: string }) => u.name)).toEqual(kept);
    // Production: a worker stores the files, in any order.
    expect((await storedState()).rows.map((row: { name: string }) => row.name).sort()).toEqual([...kept].sort());
  });

  it('when the body is larger than the files allow, then 413 before it is read', async () => {
    const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${api.base}/orders/3001/files`, {
        method: 'POST',
        headers: { ...authHeaders('baltic'), 'Content-Type': 'multipart/form-data; boundary=x', 'Content-Length': String(3 * 10 * MiB + MiB + 1) },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.write('--x\r\n');
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toEqual({ status: 413, message: 'Payload Too Large', data: null });
  });

  it('when the client aborts mid-upload, then no temporary file, object, incomplete multipart upload or row is left', async () => {
    const { body, contentType } = multipart([
      { name: 'files', filename: 'a.bin', content: Buffer.alloc(MiB, 1) },
      { name: 'files', filename: 'b.bin', content: Buffer.alloc(4 * MiB, 2) },
    ]);
    const req = http.request(`${api.base}/orders/3001/files`, {
      method: 'POST',
      headers: { ...authHeaders('baltic'), 'Content-Type': contentType, 'Content-Length': String(body.length) },
    });
    req.on('error', () => undefined);
    req.write(body.subarray(0, 3 * MiB));
    // Abort once the server is visibly writing: temp files on disk; on S3 the first file's object, written while the second arrives.
    await expect
      .poll(async () => (await filesUnder(path.join(api.dataDir, 'tmp'))).length + (api.stack ? (await api.objectKeys()).length : 0), { timeout: 5000 })
      .toBeGreaterThan(0);
    req.destroy();
    await expect.poll(async () => storedState(), { timeout: 5000 }).toEqual({ rows: [], objects: [], temp: [] });
  });
  it.each([
    ['empty', ''],
    ['..', '..'],
    ['.', '.'],
    ['a directory', 'scans/'],
    // On the wire `C:\scans\\`: a lone backslash before the closing quote would escape it.
    ['a Windows directory', 'C:\\scans\\\\'],
  ])('when a file name is %s, then the part still counts as a file named "file"', async (_name, filename) => {
    const response = await upload(3001, [
      { name: 'files', filename, content: PDF_BYTES },
      // Other bytes: the same ones would be a duplicate of the first part.
      { name: 'files', filename: 'b.pdf', content: Buffer.concat([PDF_BYTES, Buffer.from('b')]) },
    ]);
    expect(response.status).toBe(201);
    expect((await envelopeOf(response)).data.uploaded.map((u: { name: string }) => u.name)).toEqual(['file', 'b.pdf']);
    expect((await storedState()).rows.map((row) => row.name).sort()).toEqual(['b.pdf', 'file']);
  });

  it('when a part whose name reduces to nothing is empty, then 422 names it by its place among the file parts', async () => {
    const response = await upload(3001, [
      { name: 'files', filename: 'a.pdf', content: PDF_BYTES },
      { name: 'files', filename: '..', content: '' },
    ]);
    expect(response.status).toBe(422);
    expect((await envelopeOf(response)).message).toBe('The files.1 field must not be an empty file.');
    expect(await storedState()).toEqual({ rows: [], objects: [], temp: [] });
  });

  it('when the only files part is a plain field without a file name, then 422 files required', async () => {
    const response = await upload(3001, [{ name: 'files', content: 'not a file' }]);
    expect(response.status).toBe(422);
    expect((await envelopeOf(response)).message).toBe('The files field is required.');
  });

  it('when a file comes in a part other than files, then it is ignored and does not count towards the limit', async () => {
    const response = await upload(3001, [
      { name: 'attachment', filename: 'x.pdf', content: PDF_BYTES },
      ...[0, 1, 2].map((i) => ({ name: 'files', filename: `f${i}.pdf`, content: Buffer.concat([PDF_BYTES, Buffer.from(String(i))]) })),
      { name: 'other', filename: 'y.pdf', content: PDF_BYTES },
    ]);
    expect(response.status).toBe(201);
    expect((await envelopeOf(response)).data.uploaded.map((u: { name: string }) => u.name)).toEqual(['f0.pdf', 'f1.pdf', 'f2.pdf']);
    const { rows, temp } = await storedState();
    expect(rows).toHaveLength(3);
    expect(temp).toEqual([]);
  });

  it('when a file name holds a control character sent escaped, then it is dropped from the name', async () => {
    // %0A, %0D and %22 are how browsers escape LF, CR and a quote in a part header (WHATWG); multer turns them back.
    const response = await upload(3001, [{ name: 'files', filename: 'two%0Alines%0D.pdf', content: PDF_BYTES }]);
    expect(response.status).toBe(201);
    expect((await envelopeOf(response)).data.uploaded[0].name).toBe('twolines.pdf');
  });

  it('when a part header holds a raw control byte, then 400 envelope (the header is malformed) and nothing is left', async () => {
    const response = await upload(3001, [{ name: 'files', filename: 'ctl\x01name.pdf', content: PDF_BYTES }]);
    expect(response.status).toBe(400);
    expect(await envelopeOf(response)).toMatchObject({ status: 400, data: null });
    expect(await storedState()).toEqual({ rows: [], objects: [], temp: [] });
  });

  it('when a chunked body grows past the limit, then 413 comes at once, the connection closes and no temp file is left', async () => {
    const head = Buffer.from('--x\r\nContent-Disposition: form-data; name="files"; filename="a.bin"\r\n\r\n');
    // Many small parts would hit the part limit first; an unknown file part is read but never kept.
    const unknownPart = Buffer.from('--x\r\nContent-Disposition: form-data; name="junk"; filename="j.bin"\r\n\r\n');
    const answer = await endlessUpload(Buffer.concat([head, Buffer.from('abc\r\n'), unknownPart]), Buffer.alloc(MiB, 7));
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({ status: 413, message: 'Payload Too Large', data: null });
    expect(answer.connection).toBe('close');
    // At once: the answer came while the client had sent little more than the limit (and what socket buffers hold).
    expect(answer.sentBytes).toBeLessThan(3 * 10 * MiB + 12 * MiB);
    expect(await storedState()).toEqual({ rows: [], objects: [], temp: [] });
  });

  it('when a chunked file part passes 10 MiB, then 422 comes at once without reading the rest, and no temp file is left', async () => {
    const head = Buffer.from(
      '--x\r\nContent-Disposition: form-data; name="files"; filename="ok.pdf"\r\n\r\n%PDF-1.4\r\n--x\r\nContent-Disposition: form-data; name="files"; filename="big.bin"\r\n\r\n',
    );
    const answer = await endlessUpload(head, Buffer.alloc(MiB, 7));
    expect(answer.status).toBe(422);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 422, message: 'The files.1 field must not be greater than 10240 kilobytes.', data: null });
    expect(answer.connection).toBe('close');
    // At once, without reading the rest: the client had sent little more than the file's limit and what the socket
    // buffers hold (the server stops reading while it removes what it stored).
    expect(answer.sentBytes).toBeLessThan(10 * MiB + 24 * MiB);
    expect(await storedState()).toEqual({ rows: [], objects: [], temp: [] });
  });
});
