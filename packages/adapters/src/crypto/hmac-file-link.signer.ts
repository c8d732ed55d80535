import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FileLinkClaims, FileLinkSignerPort } from '@logi/domain';

/**
 * The token format's version, first in the payload, so a later format can tell
 * old tokens apart. 2 adds the id of the API key that made the link; tokens of
 * 1 (no key to check) are refused.
 */
const VERSION = 2;
/** Where the generated key is kept when FILE_LINK_SECRET is unset. */
export const FILE_LINK_KEY_FILE = 'file-link.key';

/**
 * File link tokens: `<payload>.<mac>`, both base64url; the payload is
 * `[version, file id, directory, expires, API key id]` as JSON and the mac its
 * HMAC-SHA256. Compared in constant time. See ADR 0040.
 */
export class HmacFileLinkSigner implements FileLinkSignerPort {
  private key: Buffer | null = null;

  /** `key` may be a function: it is called on the first sign or verify, so a process that never signs (S3 presigns) never loads it. */
  constructor(private readonly keySource: Buffer | (() => Buffer)) {}

  sign(claims: FileLinkClaims): string {
    const payload = Buffer.from(JSON.stringify([VERSION, claims.fileId, claims.directory, claims.expires, claims.keyId])).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  verify(token: string): FileLinkClaims | null {
    const match = /^([A-Za-z0-9_-]{1,1024})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match) return null;
    const [, payload, mac] = match as unknown as [string, string, string];
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    if (!Array.isArray(claims) || claims.length !== 5 || claims[0] !== VERSION) return null;
    const [, fileId, directory, expires, keyId] = claims as [unknown, unknown, unknown, unknown, unknown];
    if (!Number.isSafeInteger(fileId) || typeof directory !== 'string' || !Number.isSafeInteger(expires) || !Number.isSafeInteger(keyId)) return null;
    return { fileId: fileId as number, directory, expires: expires as number, keyId: keyId as number };
  }

  private mac(payload: string): Buffer {
    this.key ??= typeof this.keySource === 'function' ? this.keySource() : this.keySource;
    return createHmac('sha256', this.key).update(payload).digest();
  }
}

/**
 * The signing key: FILE_LINK_SECRET when set, else a random key made once and
 * kept in `<dataDir>/file-link.key`, so the embedded profile needs no set-up.
 * Several processes sharing DATA_DIR agree on it: the first to start writes
 * it (temp file, then a hard link that fails if another got there first),
 * every one reads the file. Synchronous: it runs once, while the process
 * starts (the composition root binds it).
 */
export function loadFileLinkKey(secret: string | null, dataDir: string): Buffer {
  if (secret !== null) return Buffer.from(secret, 'utf8');
  const file = path.join(dataDir, FILE_LINK_KEY_FILE);
  const existing = readKey(file);
  if (existing) return existing;
  mkdirSync(dataDir, { recursive: true });
  const temp = path.join(dataDir, `.${FILE_LINK_KEY_FILE}.${randomUUID()}.tmp`);
  try {
    writeFileSync(temp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    linkSync(temp, file);
  } catch (error) {
    // Another process made it first: its key is the one.
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  const made = readKey(file);
  if (!made) throw new Error(`The file link key in ${FILE_LINK_KEY_FILE} is not 64 hex digits; remove it to make a new one (links made with it stop working)`);
  return made;
}

function readKey(file: string): Buffer | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return null;
    throw error;
  }
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/.test(hex))
    throw new Error(`The file link key in ${FILE_LINK_KEY_FILE} is not 64 hex digits; remove it to make a new one (links made with it stop working)`);
  return Buffer.from(hex, 'hex');
}
