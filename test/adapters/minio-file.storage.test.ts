import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { Writable } from 'node:stream';
import path from 'node:path';
import { Client } from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MinioFileStorage } from '@logi/adapters';
import { S3RVER_ACCESS_KEY, S3RVER_SECRET_KEY, TestS3Server } from '../support/s3rver.js';

let s3: TestS3Server;
let tmp: string;
let storage: MinioFileStorage;

const storageFor = (endPoint: string, bucket = 'logi-files') =>
  new MinioFileStorage({ endPoint, accessKey: S3RVER_ACCESS_KEY, secretKey: S3RVER_SECRET_KEY, bucket, requestTimeoutMs: 2_000 });

/** A minio client of its own on the test server: what an operator (or another system) does behind the storage's back. */
const adminClient = () => {
  const url = new URL(s3.endPoint);
  return new Client({
    endPoint: url.hostname,
    port: Number(url.port),
    useSSL: false,
    pathStyle: true,
    accessKey: S3RVER_ACCESS_KEY,
    secretKey: S3RVER_SECRET_KEY,
  });
};

beforeAll(async () => {
  s3 = await TestS3Server.start();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'minio-storage-'));
  storage = storageFor(s3.endPoint);
  await storage.init();
});

afterAll(async () => {
  await s3?.destroy();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('MinioFileStorage against s3rver', () => {
  it('when an object is streamed, whole or one range, then exactly its bytes; stat gives its size', async () => {
    const bytes = Buffer.from(Array.from({ length: 200_003 }, (_, i) => (i * 7) % 256));
    await storage.putBuffer('orders/ACME/9/stream', bytes, 'application/octet-stream');
    const collect = async (stream: NodeJS.ReadableStream) => {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    };
    expect(await storage.stat('orders/ACME/9/stream')).toEqual({ size: bytes.length });
    expect(await collect(await storage.getStream('orders/ACME/9/stream'))).toEqual(bytes);
    // Not [0, 0]: s3rver reads an end of 0 as "to the end" (stores/filesystem.js `options.end || Infinity`); S3 does not.
    for (const [start, end] of [
      [0, 9],
      [5, 5],
      [1_000, 65_999],
      [bytes.length - 3, bytes.length - 1],
    ] as const) {
      expect(await collect(await storage.getStream('orders/ACME/9/stream', { start, end }))).toEqual(bytes.subarray(start, end + 1));
    }
    await expect(storage.stat('orders/ACME/9/none')).rejects.toThrow('File not found in storage: orders/ACME/9/none');
    await expect(storage.getStream('orders/ACME/9/none')).rejects.toThrow('File not found in storage: orders/ACME/9/none');
    await storage.delete('orders/ACME/9/stream');
  });

  it('when a GET is presigned, then the URL answers without credentials with the bytes, the given disposition and type, until it expires', async () => {
    const bytes = Buffer.from('presigned bytes');
    await storage.putBuffer('orders/ACME/9/linked', bytes, 'application/octet-stream');
    const disposition = `attachment; filename="L_d_.txt"; filename*=UTF-8''%C5%81%C3%B3d%C5%BA.txt`;
    const options = { contentDisposition: disposition, contentType: 'text/plain' };
    // Two links: a 1-second one could expire before a loaded machine's first fetch (seen in CI, a 403).
    const url = await storage.presignGet('orders/ACME/9/linked', { ttlSeconds: 60, ...options });
    expect(url).not.toBeNull();
    const response = await fetch(url!);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);
    expect(response.headers.get('content-disposition')).toBe(disposition);
    expect(response.headers.get('content-type')).toBe('text/plain');
    const shortLived = await storage.presignGet('orders/ACME/9/linked', { ttlSeconds: 1, ...options });
    expect(new URL(shortLived!).searchParams.get('X-Amz-Expires')).toBe('1');
    await expect.poll(async () => (await fetch(shortLived!)).status, { timeout: 10_000, interval: 250 }).toBe(403);
    await storage.delete('orders/ACME/9/linked');
  });

  it('when a public endpoint is set, then links are signed for it and no request goes there', async () => {
    const behind = new MinioFileStorage({
      endPoint: s3.endPoint,
      publicEndPoint: 'https://files.example.test:9443',
      accessKey: S3RVER_ACCESS_KEY,
      secretKey: S3RVER_SECRET_KEY,
      bucket: 'logi-files',
    });
    const url = new URL((await behind.presignGet('orders/ACME/9/x', { ttlSeconds: 60, contentDisposition: 'attachment', contentType: 'text/plain' }))!);
    expect(url.origin).toBe('https://files.example.test:9443');
    expect(url.pathname).toBe('/logi-files/orders/ACME/9/x');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
  });

  it('when init runs on a server without the bucket, then the bucket is made and init can run again', async () => {
    const fresh = storageFor(s3.endPoint, 'fresh-bucket');
    await fresh.init();
    await fresh.init();
    await fresh.putBuffer('pdf/a.pdf', Buffer.from('x'), 'application/pdf');
    expect(await fresh.exists('pdf/a.pdf')).toBe(true);
    await fresh.delete('pdf/a.pdf');
  });

  it('when a buffer is put, then it reads back byte for byte and exists', async () => {
    const bytes = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x10]);
    await storage.putBuffer('pdf/one.pdf', bytes, 'application/pdf');
    expect(await storage.exists('pdf/one.pdf')).toBe(true);
    expect(Buffer.compare(await storage.getBuffer('pdf/one.pdf'), bytes)).toBe(0);
    await storage.delete('pdf/one.pdf');
    expect(await storage.exists('pdf/one.pdf')).toBe(false);
  });

  it('when a 10 MiB local file is put and copied, then the copy holds the same bytes (single PUT, server-side copy)', async () => {
    const local = path.join(tmp, 'big.bin');
    const bytes = Buffer.alloc(10 * 1024 * 1024, 7);
    bytes.write('head', 0);
    await writeFile(local, bytes);
    await storage.putFile('staging/big', local, bytes.length, 'application/octet-stream');
    await storage.copy('staging/big', 'orders/ACME/5/big');
    const copied = await storage.getBuffer('orders/ACME/5/big');
    expect(copied.length).toBe(bytes.length);
    expect(Buffer.compare(copied, bytes)).toBe(0);
    await storage.delete('staging/big');
    await storage.delete('orders/ACME/5/big');
  });

  it("when a local file over 64 MiB is put (an export's archive), then the minio client's multipart upload stores it and it reads back byte-identical", async () => {
    const local = path.join(tmp, 'archive.zip');
    const bytes = randomBytes(70 * 1024 * 1024);
    await writeFile(local, bytes);
    // The client's HTTP trace: which requests went out.
    const trace: string[] = [];
    const client = (storage as unknown as { client: Client }).client;
    client.traceOn(new Writable({ write: (chunk: Buffer, _encoding, next) => (trace.push(chunk.toString('utf8')), next()) }));
    try {
      await storage.putFile('exports/ACME/archive.zip', local, bytes.length, 'application/zip');
    } finally {
      client.traceOff();
    }
    const requests = trace.join('').match(/^REQUEST: \w+ \S+/gm) ?? [];
    expect(requests.filter((line) => /[?&]uploads(=|&|$)/.test(line) && line.startsWith('REQUEST: POST'))).toHaveLength(1);
    expect(requests.filter((line) => /partNumber=\d+/.test(line))).toHaveLength(2);
    expect(requests.filter((line) => /[?&]uploadId=/.test(line) && line.startsWith('REQUEST: POST'))).toHaveLength(1);
    const stat = await adminClient().statObject('logi-files', 'exports/ACME/archive.zip');
    expect(stat.size).toBe(bytes.length);
    const back = await storage.getBuffer('exports/ACME/archive.zip');
    expect(createHash('sha256').update(back).digest('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));
    await storage.delete('exports/ACME/archive.zip');
  }, 60_000);

  it('when a local file is put with its SHA-256, then one PUT streamed from the file stores exactly its bytes and type, also in a bucket made again', async () => {
    const local = path.join(tmp, 'hashed.bin');
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17, 3);
    bytes.write('hashed', 1_000);
    await writeFile(local, bytes);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const admin = adminClient();
    const fresh = storageFor(s3.endPoint, 'hashed-bucket');
    await fresh.init();
    await admin.removeBucket('hashed-bucket');
    await fresh.putFile('orders/ACME/5/hashed', local, bytes.length, 'application/pdf', sha256);
    expect(Buffer.compare(await fresh.getBuffer('orders/ACME/5/hashed'), bytes)).toBe(0);
    const stat = await admin.statObject('hashed-bucket', 'orders/ACME/5/hashed');
    expect({ size: stat.size, type: stat.metaData['content-type'] }).toEqual({ size: bytes.length, type: 'application/pdf' });
    await fresh.delete('orders/ACME/5/hashed');
  });

  it('when a missing key is read, copied or deleted, then reads name the key and the delete passes', async () => {
    await expect(storage.getBuffer('pdf/none.pdf')).rejects.toThrow('File not found in storage: pdf/none.pdf');
    await expect(storage.copy('staging/none', 'orders/a/1/none')).rejects.toThrow('File not found in storage: staging/none');
    expect(await storage.exists('orders/a/1/none')).toBe(false);
    await expect(storage.delete('staging/none')).resolves.toBeUndefined();
  });

  it('when a key is not service-made, then it is refused before any request', async () => {
    await expect(storage.putBuffer('../x', Buffer.from('x'), 'text/plain')).rejects.toThrow(/^Invalid storage key/);
  });

  it('when the credentials are wrong, then the error is readable and holds no secret', async () => {
    const wrong = new MinioFileStorage({ endPoint: s3.endPoint, accessKey: 'NOPE', secretKey: 'very-secret-value', bucket: 'logi-files' });
    const error = (await wrong.ping().catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('Storage unavailable: S3 error AccessDenied');
    expect(error.message).not.toContain('very-secret-value');
  });

  it('when the server stops, then operations fail fast with a readable error, and work again once it is back', async () => {
    await storage.putBuffer('staging/keep', Buffer.from('kept'), 'text/plain');
    await s3.stop();
    try {
      const started = Date.now();
      const errors = await Promise.all([
        storage.ping().catch((e: unknown) => e),
        storage.putBuffer('staging/during', Buffer.from('x'), 'text/plain').catch((e: unknown) => e),
        storage.getBuffer('staging/keep').catch((e: unknown) => e),
      ]);
      expect(Date.now() - started).toBeLessThan(3_000);
      for (const error of errors) {
        // A kept-alive socket that the server dropped answers ECONNRESET; a new one is refused.
        expect((error as Error).message).toMatch(/^Storage unavailable: (connect ECONNREFUSED|ECONNRESET)$/);
        expect((error as Error).message).not.toContain('127.0.0.1');
      }
    } finally {
      await s3.start();
    }
    await storage.ping();
    expect((await storage.getBuffer('staging/keep')).toString()).toBe('kept');
    await storage.delete('staging/keep');
  });

  it("when the bucket is deleted behind the storage's back, then the next operations make it again and succeed", async () => {
    const bucket = 'vanishing-bucket';
    const vanishing = storageFor(s3.endPoint, bucket);
    const admin = adminClient();
    const dropBucket = async () => {
      // S3 deletes only empty buckets.
      for await (const item of admin.listObjectsV2(bucket, '', true)) await admin.removeObject(bucket, (item as { name: string }).name);
      await admin.removeBucket(bucket);
      expect(await admin.bucketExists(bucket)).toBe(false);
    };

    await vanishing.putBuffer('pdf/before.pdf', Buffer.from('before'), 'application/pdf');
    await dropBucket();
    await vanishing.putBuffer('pdf/after.pdf', Buffer.from('after'), 'application/pdf');
    expect((await vanishing.getBuffer('pdf/after.pdf')).toString()).toBe('after');
    expect(await admin.bucketExists(bucket)).toBe(true);

    // A read in a vanished bucket is an ordinary missing file, not "Storage unavailable".
    await dropBucket();
    await expect(vanishing.getBuffer('pdf/after.pdf')).rejects.toThrow('File not found in storage: pdf/after.pdf');

    // Callers that find the bucket gone at the same time all succeed.
    await dropBucket();
    const keys = ['staging/a', 'staging/b', 'staging/c'];
    await Promise.all(keys.map((key) => vanishing.putBuffer(key, Buffer.from(key), 'text/plain')));
    for (const key of keys) expect((await vanishing.getBuffer(key)).toString()).toBe(key);
    expect(await vanishing.deleteStale('staging/', new Date(Date.now() + 60_000), 100)).toBe(3);
  });

  it('when the reader of a download stops reading for longer than the bound, then every byte still arrives (back-pressure is not silence)', async () => {
    const patient = storageFor(s3.endPoint);
    const key = 'orders/slow-reader/1/object';
    const bytes = Buffer.alloc(2 * 1024 * 1024, 7);
    bytes.write('first and last', 0);
    await patient.putBuffer(key, bytes, 'application/octet-stream');
    const stream = (await patient.getStream(key)) as NodeJS.ReadableStream & AsyncIterable<Buffer>;
    const reader = stream[Symbol.asyncIterator]();
    const chunks: Buffer[] = [];
    const first = await reader.next();
    if (!first.done) chunks.push(first.value as Buffer);
    // The fault: the reader holds back three times the storage's 2 s bound while S3 has more to send.
    await new Promise((resolve) => setTimeout(resolve, 6_500));
    for (let next = await reader.next(); !next.done; next = await reader.next()) chunks.push(next.value as Buffer);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  }, 20_000);

  it('when S3 stops sending in the middle of a body while the reader waits, then the download fails within twice the bound', async () => {
    const http = await import('node:http');
    const sockets: import('node:net').Socket[] = [];
    // Answers the bucket check, then starts an object's body and goes quiet, its connection open.
    const stalling = http.createServer((req, res) => {
      if (req.method !== 'GET') return void res.writeHead(200).end();
      res.writeHead(200, { 'Content-Length': String(1024 * 1024), 'Content-Type': 'application/octet-stream' });
      res.write(Buffer.alloc(1000, 1));
    });
    stalling.on('connection', (socket: import('node:net').Socket) => sockets.push(socket));
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
    try {
      const port = (stalling.address() as import('node:net').AddressInfo).port;
      const storage = new MinioFileStorage({
        endPoint: `http://127.0.0.1:${port}`,
        accessKey: S3RVER_ACCESS_KEY,
        secretKey: S3RVER_SECRET_KEY,
        bucket: 'logi-files',
        requestTimeoutMs: 300,
      });
      const stream = (await storage.getStream('orders/stalled/1/object')) as NodeJS.ReadableStream & AsyncIterable<Buffer>;
      const started = Date.now();
      const read = (async () => {
        let bytes = 0;
        for await (const chunk of stream) bytes += chunk.length;
        return bytes;
      })();
      await expect(read).rejects.toThrow(/timed out|aborted/);
      // Twice the bound, with room for a loaded machine's late timers: without the watch the read never ends.
      expect(Date.now() - started).toBeLessThan(2 * 300 + 5_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => stalling.close(() => resolve()));
    }
  });

  it('when the endpoint accepts connections but never answers, then the request times out within the bound', async () => {
    const net = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as import('node:net').AddressInfo).port;
      const hanging = new MinioFileStorage({
        endPoint: `http://127.0.0.1:${port}`,
        accessKey: S3RVER_ACCESS_KEY,
        secretKey: S3RVER_SECRET_KEY,
        bucket: 'logi-files',
        requestTimeoutMs: 300,
      });
      const started = Date.now();
      await expect(hanging.ping()).rejects.toThrow('Storage unavailable: ETIMEDOUT');
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('MinioFileStorage sweeping', () => {
  it('when objects under a prefix were written before the cut-off, then they go and other prefixes stay', async () => {
    const sweeping = storageFor(s3.endPoint, 'sweep-bucket');
    for (const key of ['staging/a', 'staging/b', 'pdf/c.pdf', 'orders/d/1/e']) await sweeping.putBuffer(key, Buffer.from('x'), 'text/plain');
    expect(await sweeping.deleteStale('staging/', new Date(Date.now() - 3_600_000), 100)).toBe(0);
    expect(await sweeping.deleteStale('staging/', new Date(Date.now() + 60_000), 1)).toBe(1);
    expect(await sweeping.deleteStale('staging/', new Date(Date.now() + 60_000), 100)).toBe(1);
    expect(await sweeping.exists('staging/a')).toBe(false);
    expect(await sweeping.exists('staging/b')).toBe(false);
    expect(await sweeping.exists('pdf/c.pdf')).toBe(true);
    expect(await sweeping.exists('orders/d/1/e')).toBe(true);
  });
});

describe('MinioFileStorage listing old objects', () => {
  const past = new Date(Date.now() - 3 * 3_600_000);
  const cutOff = () => new Date(Date.now() - 3_600_000);
  let bucketCount = 0;

  /** A bucket of its own per test, with these objects; the `old` ones look written three hours ago. */
  async function bucketWith(objects: Record<string, 'old' | 'young'>): Promise<{ listing: MinioFileStorage; bucket: string }> {
    const bucket = `listing-${++bucketCount}`;
    const listing = storageFor(s3.endPoint, bucket);
    for (const [key, age] of Object.entries(objects)) {
      await listing.putBuffer(key, Buffer.from(key), 'text/plain');
      if (age === 'old') await s3.backdate(bucket, key, past);
    }
    return { listing, bucket };
  }

  async function walk(listing: MinioFileStorage, limit: number): Promise<{ keys: string[]; pages: number }> {
    const keys: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const page = await listing.listOlderThan('orders/', cutOff(), { limit, after });
      keys.push(...page.keys);
      after = page.next;
      pages += 1;
      expect(pages).toBeLessThan(100);
    } while (after !== null);
    return { keys, pages };
  }

  it('when objects under a prefix are old and young, then only the old ones are named, other prefixes and foreign keys never, and nothing is deleted', async () => {
    const { listing, bucket } = await bucketWith({
      'orders/d/1/old': 'old',
      'orders/d/1/young': 'young',
      'orders/d/2/old': 'old',
      'staging/old': 'old',
      'pdf/old.pdf': 'old',
    });
    // An object the service could not have made (put by hand): never named, so it can never stop a walk.
    const admin = adminClient();
    await admin.putObject(bucket, 'orders/d/3/by hand', Buffer.from('x'), 1);
    await s3.backdate(bucket, 'orders/d/3/by hand', past);
    expect(await listing.listOlderThan('orders/', cutOff(), { limit: 100, after: null })).toEqual({ keys: ['orders/d/1/old', 'orders/d/2/old'], next: null });
    for (const key of ['orders/d/1/old', 'orders/d/1/young', 'orders/d/2/old', 'staging/old', 'pdf/old.pdf']) expect(await listing.exists(key)).toBe(true);
  });

  it('when there are more objects than a page, then pages of at most that many keys, each from the marker, name every old object once', async () => {
    const old = ['orders/d/1/a', 'orders/d/1/b', 'orders/d/2/a', 'orders/d/3/a', 'orders/e/1/a'];
    const { listing } = await bucketWith({ ...Object.fromEntries(old.map((key) => [key, 'old' as const])), 'orders/d/2/young': 'young' });
    for (const limit of [1, 2, 4, 6, 1_000]) {
      const { keys, pages } = await walk(listing, limit);
      expect(keys).toEqual(old);
      expect(pages).toBe(Math.ceil(6 / limit));
    }
    expect(await listing.listOlderThan('orders/', cutOff(), { limit: 2, after: null })).toEqual({
      keys: ['orders/d/1/a', 'orders/d/1/b'],
      next: 'orders/d/1/b',
    });
    expect(await listing.listOlderThan('orders/', cutOff(), { limit: 2, after: 'orders/d/1/b' })).toEqual({ keys: ['orders/d/2/a'], next: 'orders/d/2/young' });
  });

  it("when the marker's object was removed in between, then the next page still starts right after it", async () => {
    const { listing } = await bucketWith({ 'orders/d/1/a': 'old', 'orders/d/1/b': 'old', 'orders/d/2/c': 'old' });
    const first = await listing.listOlderThan('orders/', cutOff(), { limit: 2, after: null });
    expect(first.next).toBe('orders/d/1/b');
    for (const key of first.keys) await listing.delete(key);
    expect(await listing.listOlderThan('orders/', cutOff(), { limit: 2, after: first.next })).toEqual({ keys: ['orders/d/2/c'], next: null });
  });

  it('when the server is down, then listing fails with a readable error instead of an empty page', async () => {
    const { listing } = await bucketWith({ 'orders/d/1/a': 'old' });
    await s3.stop();
    try {
      await expect(listing.listOlderThan('orders/', cutOff(), { limit: 10, after: null })).rejects.toThrow(/^Storage unavailable: /);
    } finally {
      await s3.start();
    }
    expect((await listing.listOlderThan('orders/', cutOff(), { limit: 10, after: null })).keys).toEqual(['orders/d/1/a']);
  });
});

describe('MinioFileStorage writes while the bytes arrive (ADR 0056)', () => {
  const MiB = 1024 * 1024;
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  const incompleteUploads = async () => (await adminClient().listIncompleteUploadsQuery('logi-files', 'orders/', '', '', '')).uploads.map((u) => u.key);
  const collect = async (stream: NodeJS.ReadableStream) => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  /** Hands `bytes` over in chunks of 64 KiB, as a request's file part arrives. */
  const feed = async (write: { write(chunk: Buffer): Promise<void> }, bytes: Buffer) => {
    for (let at = 0; at < bytes.length; at += 64 * 1024) await write.write(bytes.subarray(at, at + 64 * 1024));
  };

  it('when more than 10 MiB arrive, then a multipart upload of 5 MiB parts is under way before the last byte, and the object reads back byte-identical', async () => {
    const bytes = randomBytes(17 * MiB + 123);
    const key = 'orders/STREAM/1/multipart';
    const write = storage.beginWrite(key, Promise.resolve('application/pdf'));
    await feed(write, bytes.subarray(0, 11 * MiB));
    // The first part went out while the rest is still to come.
    await expect.poll(incompleteUploads, { timeout: 5_000 }).toEqual([key]);
    expect(await storage.exists(key)).toBe(false);
    await feed(write, bytes.subarray(11 * MiB));
    await write.end({ size: bytes.length, sha256: sha256(bytes), contentType: 'application/pdf' });
    // Compared whole with Buffer.equals (toEqual walks the 11 MiB byte by byte).
    expect((await collect(await storage.getStream(key))).equals(bytes)).toBe(true);
    expect((await adminClient().statObject('logi-files', key)).metaData['content-type']).toBe('application/pdf');
    expect(await incompleteUploads()).toEqual([]);
  });

  it('when at most 10 MiB arrive, then one PUT carries them, with no multipart upload', async () => {
    const bytes = randomBytes(10 * MiB);
    const key = 'orders/STREAM/1/whole';
    const write = storage.beginWrite(key, Promise.resolve('text/plain'));
    await feed(write, bytes);
    expect(await incompleteUploads()).toEqual([]);
    await write.end({ size: bytes.length, sha256: sha256(bytes), contentType: 'text/plain' });
    expect((await collect(await storage.getStream(key))).equals(bytes)).toBe(true);
    expect((await adminClient().statObject('logi-files', key)).metaData['content-type']).toBe('text/plain');
  });

  it('when a write is given up after its first part went out, then neither an object nor an incomplete upload is left', async () => {
    const key = 'orders/STREAM/1/aborted';
    const write = storage.beginWrite(key, Promise.resolve('application/octet-stream'));
    await feed(write, randomBytes(12 * MiB));
    await expect.poll(incompleteUploads, { timeout: 5_000 }).toEqual([key]);
    await write.abort();
    expect(await incompleteUploads()).toEqual([]);
    expect(await storage.exists(key)).toBe(false);
    await expect(write.write(Buffer.from('late'))).rejects.toThrow();
  });

  it('when a write is given up after it ended, then its object is removed', async () => {
    const bytes = randomBytes(6 * MiB);
    const key = 'orders/STREAM/1/ended';
    const write = storage.beginWrite(key, Promise.resolve('application/octet-stream'));
    await feed(write, bytes);
    await write.end({ size: bytes.length, sha256: sha256(bytes), contentType: 'application/octet-stream' });
    expect(await storage.exists(key)).toBe(true);
    await write.abort();
    expect(await storage.exists(key)).toBe(false);
    expect(await incompleteUploads()).toEqual([]);
  });

  it.each([
    { what: 'a multipart upload', bytes: 12 * MiB },
    { what: 'one PUT', bytes: 2 * MiB },
  ])('when the bytes written are not the size the write is ended with ($what), then it fails and nothing is left', async ({ bytes: length }) => {
    const bytes = randomBytes(length);
    const key = `orders/STREAM/1/short-${length}`;
    const write = storage.beginWrite(key, Promise.resolve('application/octet-stream'));
    await feed(write, bytes);
    await expect(write.end({ size: length + 1, sha256: sha256(bytes), contentType: 'application/octet-stream' })).rejects.toThrow(
      `The file's ${length + 1} bytes arrived as ${length}; nothing was stored.`,
    );
    await write.abort();
    expect(await incompleteUploads()).toEqual([]);
    expect(await storage.exists(key)).toBe(false);
  });

  it('when the sniff fails, then the multipart upload never commits and nothing is left', async () => {
    const key = 'orders/STREAM/1/unsniffed';
    const write = storage.beginWrite(key, Promise.reject(new Error('sniff failed')));
    await expect(feed(write, randomBytes(12 * MiB))).rejects.toThrow();
    await write.abort();
    expect(await incompleteUploads()).toEqual([]);
    expect(await storage.exists(key)).toBe(false);
  });
});
