import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FILE_LINK_KEY_FILE, HmacFileLinkSigner, loadFileLinkKey } from '@logi/adapters';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'file-link-key-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const claims = { fileId: 42, directory: 'baltic-haulage', expires: 1_800_000_000, keyId: 7 };

describe('HmacFileLinkSigner', () => {
  it('when a token is signed, then it is URL-safe and verifies to the same claims', () => {
    const signer = new HmacFileLinkSigner(Buffer.alloc(32, 1));
    const token = signer.sign(claims);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(signer.verify(token)).toEqual(claims);
  });

  it('when a token is altered, made with another key or malformed, then it does not verify', () => {
    const signer = new HmacFileLinkSigner(Buffer.alloc(32, 1));
    const token = signer.sign(claims);
    const [payload, mac] = token.split('.') as [string, string];
    const longer = Buffer.from(JSON.stringify([2, 42, 'baltic-haulage', 1_900_000_000, 7])).toString('base64url');
    for (const bad of [
      `${longer}.${mac}`,
      `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      new HmacFileLinkSigner(Buffer.alloc(32, 2)).sign(claims),
      '',
      'abc',
      `${payload}.`,
      `${payload}.${mac}.x`,
    ]) {
      expect(signer.verify(bad), bad).toBeNull();
    }
    // A well-signed payload of another shape is refused too.
    const macOf = (payload: string) => createHmac('sha256', Buffer.alloc(32, 1)).update(payload).digest('base64url');
    const odd = Buffer.from(JSON.stringify({ fileId: 42 })).toString('base64url');
    expect(signer.verify(`${odd}.${macOf(odd)}`)).toBeNull();
    // A token of the first format, which named no API key, is refused: nothing could end it before its time.
    const keyless = Buffer.from(JSON.stringify([1, 42, 'baltic-haulage', 1_900_000_000])).toString('base64url');
    expect(signer.verify(`${keyless}.${macOf(keyless)}`)).toBeNull();
  });
});

describe('HmacFileLinkSigner with a key loader', () => {
  it('when nothing is signed or verified, then the key is never loaded; then once', () => {
    let loads = 0;
    const signer = new HmacFileLinkSigner(() => {
      loads += 1;
      return Buffer.alloc(32, 3);
    });
    expect(loads).toBe(0);
    const token = signer.sign(claims);
    expect(signer.verify(token)).toEqual(claims);
    expect(loads).toBe(1);
  });
});

describe('loadFileLinkKey', () => {
  it('when FILE_LINK_SECRET is set, then it is the key and nothing is written', async () => {
    const key = loadFileLinkKey('s'.repeat(40), dir);
    expect(key.toString()).toBe('s'.repeat(40));
    await expect(stat(path.join(dir, FILE_LINK_KEY_FILE))).rejects.toThrow();
  });

  it('when unset, then a random key is made once in DATA_DIR (owner-only) and every later load reads the same', async () => {
    const first = loadFileLinkKey(null, dir);
    expect(first.length).toBe(32);
    const file = path.join(dir, FILE_LINK_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toBe(first.toString('hex'));
    expect(loadFileLinkKey(null, dir)).toEqual(first);
    // Tokens signed by one process verify in another that shares DATA_DIR.
    expect(new HmacFileLinkSigner(loadFileLinkKey(null, dir)).verify(new HmacFileLinkSigner(first).sign(claims))).toEqual(claims);
  });

  it('when the key file holds something else, then loading fails with a message naming the file, not its content', async () => {
    await writeFile(path.join(dir, FILE_LINK_KEY_FILE), 'not-a-key');
    expect(() => loadFileLinkKey(null, dir)).toThrow(/file-link\.key is not 64 hex digits/);
  });
});
