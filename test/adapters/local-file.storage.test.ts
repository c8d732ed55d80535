import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalFileStorage } from '@logi/adapters';

let dir: string;
let storage: LocalFileStorage;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'local-storage-'));
  storage = new LocalFileStorage(path.join(dir, 'files'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function listAll(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

describe('LocalFileStorage', () => {
  it('when a buffer is put, then it can be read back and exists', async () => {
    await storage.putBuffer('pdf/abc.pdf', Buffer.from('%PDF-1.7'), 'application/pdf');
    expect(await storage.exists('pdf/abc.pdf')).toBe(true);
    expect((await storage.getBuffer('pdf/abc.pdf')).toString()).toBe('%PDF-1.7');
  });

  it('when a local file is put and copied, then both keys hold its bytes and no temp file is left', async () => {
    const local = path.join(dir, 'upload.part');
    await writeFile(local, 'hello');
    await storage.putFile('staging/u1', local, 5, 'text/plain');
    await storage.copy('staging/u1', 'orders/ACME-1/7/u1');
    expect((await storage.getBuffer('orders/ACME-1/7/u1')).toString()).toBe('hello');
    expect(await listAll(path.join(dir, 'files'))).toEqual(['orders/ACME-1/7/u1', 'staging/u1']);
  });

  it('when a key is written twice, then the last write wins whole', async () => {
    await storage.putBuffer('pdf/x.pdf', Buffer.from('first version'), 'application/pdf');
    await storage.putBuffer('pdf/x.pdf', Buffer.from('second'), 'application/pdf');
    expect((await storage.getBuffer('pdf/x.pdf')).toString()).toBe('second');
  });

  it('when a missing key is deleted, then nothing fails; a present one is gone', async () => {
    await expect(storage.delete('staging/none')).resolves.toBeUndefined();
    await storage.putBuffer('staging/here', Buffer.from('x'), 'text/plain');
    await storage.delete('staging/here');
    expect(await storage.exists('staging/here')).toBe(false);
  });

  it('when a missing key is read or copied, then the error names the key, not a path', async () => {
    await expect(storage.getBuffer('pdf/missing.pdf')).rejects.toThrow('File not found in storage: pdf/missing.pdf');
    const error = await storage.copy('staging/missing', 'orders/a/1/b').catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('File not found in storage: staging/missing');
    expect(await storage.exists('orders/a/1/b')).toBe(false);
  });

  it.each(['../escape', '/etc/passwd', 'a/../../b', 'a//b', 'a/./b', 'a\\b', 'a/b\u0000', '', 'a b', '.hidden', 'orders/x/'])(
    'when the key is %j, then it is refused before touching the disk',
    async (key) => {
      await expect(storage.putBuffer(key, Buffer.from('x'), 'text/plain')).rejects.toThrow(/^Invalid storage key/);
      await expect(storage.exists(key)).rejects.toThrow(/^Invalid storage key/);
    },
  );

  it('when the root is writable, then ping passes and leaves nothing behind', async () => {
    await storage.ping();
    expect(await listAll(path.join(dir, 'files'))).toEqual([]);
  });

  it('when the root is a file, then ping fails with a message that holds no path', async () => {
    await writeFile(path.join(dir, 'blocked'), 'x');
    const blocked = new LocalFileStorage(path.join(dir, 'blocked', 'files'));
    const error = (await blocked.ping().catch((e: Error) => e)) as Error;
    expect(error.message).toMatch(/^Storage unavailable: E[A-Z]+/);
    expect(error.message).not.toContain(dir);
    await expect(blocked.putBuffer('pdf/y.pdf', Buffer.from('x'), 'application/pdf')).rejects.toThrow(/^The file could not be stored: E[A-Z]+/);
  });
});

describe('LocalFileStorage sweeping', () => {
  it('when objects under a prefix are older than the cut-off, then they and stray temp files go, and nothing else', async () => {
    for (const key of ['staging/old', 'staging/young', 'orders/d/1/old']) await storage.putBuffer(key, Buffer.from('x'), 'text/plain');
    const strayTemp = path.join(dir, 'files', 'staging', '.old.1234.tmp');
    await writeFile(strayTemp, 'half');
    const past = new Date(Date.now() - 3_600_000);
    for (const file of ['staging/old', 'orders/d/1/old']) await utimes(path.join(dir, 'files', file), past, past);
    await utimes(strayTemp, past, past);
    expect(await storage.deleteStale('staging/', new Date(Date.now() - 60_000), 100)).toBe(2);
    expect(await listAll(path.join(dir, 'files'))).toEqual(['orders/d/1/old', 'staging/young']);
  });

  it('when the prefix was never written, then nothing is deleted and nothing fails', async () => {
    expect(await storage.deleteStale('pdf/', new Date(), 100)).toBe(0);
  });
});

describe('LocalFileStorage listing old objects', () => {
  const past = new Date(Date.now() - 3 * 3_600_000);
  const cutOff = () => new Date(Date.now() - 3_600_000);

  async function put(key: string, old: boolean): Promise<void> {
    await storage.putBuffer(key, Buffer.from(key), 'text/plain');
    if (old) await utimes(path.join(dir, 'files', ...key.split('/')), past, past);
  }

  /** Every page from the start, `limit` objects at a time. */
  async function walk(prefix: string, limit: number): Promise<{ keys: string[]; pages: number }> {
    const keys: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const page = await storage.listOlderThan(prefix, cutOff(), { limit, after });
      keys.push(...page.keys);
      after = page.next;
      pages += 1;
      expect(pages).toBeLessThan(100);
    } while (after !== null);
    return { keys, pages };
  }

  it('when objects under a prefix are old and young, then only the old ones are named, other prefixes and temp files never, and nothing is deleted', async () => {
    await put('orders/d/1/old', true);
    await put('orders/d/1/young', false);
    await put('orders/d/2/old', true);
    await put('staging/old', true);
    await put('pdf/old.pdf', true);
    const strayTemp = path.join(dir, 'files', 'orders', 'd', '1', '.old.1234.tmp');
    await writeFile(strayTemp, 'half');
    await utimes(strayTemp, past, past);
    expect(await storage.listOlderThan('orders/', cutOff(), { limit: 100, after: null })).toEqual({ keys: ['orders/d/1/old', 'orders/d/2/old'], next: null });
    expect(await listAll(path.join(dir, 'files'))).toEqual([
      'orders/d/1/.old.1234.tmp',
      'orders/d/1/old',
      'orders/d/1/young',
      'orders/d/2/old',
      'pdf/old.pdf',
      'staging/old',
    ]);
  });

  it('when there are more objects than a page, then pages from the marker name every old object once, in key-segment order', async () => {
    // `a-b` sorts before `a/` as a string but after `a` as a segment: the walk follows segments.
    const keys = ['orders/a/1/x', 'orders/a/10/x', 'orders/a/2/x', 'orders/a-b/1/x', 'orders/a-b/1/y', 'orders/b/7/z'];
    for (const key of keys) await put(key, true);
    await put('orders/a/2/young', false);
    for (const limit of [1, 2, 3, 7, 100]) {
      const { keys: walked, pages } = await walk('orders/', limit);
      expect(walked).toEqual(keys);
      expect(pages).toBe(Math.max(1, Math.ceil(7 / limit)));
    }
    const first = await storage.listOlderThan('orders/', cutOff(), { limit: 2, after: null });
    expect(first).toEqual({ keys: ['orders/a/1/x', 'orders/a/10/x'], next: 'orders/a/10/x' });
  });

  it("when the marker's object was removed in between, then the next page still starts right after it", async () => {
    for (const key of ['orders/d/1/a', 'orders/d/1/b', 'orders/d/2/c']) await put(key, true);
    const first = await storage.listOlderThan('orders/', cutOff(), { limit: 2, after: null });
    expect(first.next).toBe('orders/d/1/b');
    for (const key of first.keys) await storage.delete(key);
    expect(await storage.listOlderThan('orders/', cutOff(), { limit: 2, after: first.next })).toEqual({ keys: ['orders/d/2/c'], next: null });
  });

  it('when a page ends exactly at the last object, then there is no next page', async () => {
    for (const key of ['orders/d/1/a', 'orders/d/1/b']) await put(key, true);
    expect(await storage.listOlderThan('orders/', cutOff(), { limit: 2, after: null })).toEqual({ keys: ['orders/d/1/a', 'orders/d/1/b'], next: null });
  });

  it('when the prefix was never written, then the page is empty and final', async () => {
    expect(await storage.listOlderThan('orders/', new Date(), { limit: 10, after: null })).toEqual({ keys: [], next: null });
  });
});

describe('LocalFileStorage streaming reads', () => {
  const collect = async (stream: NodeJS.ReadableStream) => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const bytes = Buffer.from(Array.from({ length: 3 * 65_536 + 17 }, (_, i) => (i * 31) % 251));

  it('when an object is streamed, then its size is stat-ed and every byte arrives in several chunks, not one buffer', async () => {
    await storage.putBuffer('orders/d/1/file', bytes, 'application/octet-stream');
    expect(await storage.stat('orders/d/1/file')).toEqual({ size: bytes.length });
    const stream = await storage.getStream('orders/d/1/file');
    let chunks = 0;
    const parts: Buffer[] = [];
    for await (const chunk of stream) {
      chunks += 1;
      parts.push(chunk as Buffer);
    }
    expect(Buffer.concat(parts)).toEqual(bytes);
    expect(chunks).toBeGreaterThan(1);
  });

  it('when a range is streamed, then exactly the bytes from start to end inclusive', async () => {
    await storage.putBuffer('orders/d/1/file', bytes, 'application/octet-stream');
    for (const [start, end] of [
      [0, 0],
      [10, 99],
      [65_530, 65_545],
      [bytes.length - 5, bytes.length - 1],
    ] as const) {
      expect(await collect(await storage.getStream('orders/d/1/file', { start, end }))).toEqual(bytes.subarray(start, end + 1));
    }
  });

  it('when the object is missing, then stat and getStream reject naming the key, and presignGet answers null', async () => {
    await expect(storage.stat('orders/d/1/none')).rejects.toThrow('File not found in storage: orders/d/1/none');
    await expect(storage.getStream('orders/d/1/none')).rejects.toThrow('File not found in storage: orders/d/1/none');
    expect(await storage.presignGet('orders/d/1/none', { ttlSeconds: 60, contentDisposition: 'attachment', contentType: 'text/plain' })).toBeNull();
  });
});
