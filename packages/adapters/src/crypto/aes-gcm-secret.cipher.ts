import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretCipherPort } from '@logi/domain';

/** A key that seals or opens secrets: an id (stored beside each value) and 32 bytes. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM, a random 96-bit IV per value. Stored form `v1:<key id>:<base64 of iv | tag | ciphertext>`; the key id
 * is also authenticated (additional data), so a value cannot be moved under another key's name. A value without the
 * `v1:` prefix is plain text from before encryption (`whsec_...`) and passes through (ADR 0043).
 */
export class AesGcmSecretCipher implements SecretCipherPort {
  readonly keyIds: readonly string[];
  private readonly keys: Map<string, Buffer>;

  /** `keys[0]` seals; every key opens. No key: nothing is sealed (values are stored plain, as before encryption). */
  constructor(keys: readonly SecretKey[]) {
    for (const { id, key } of keys) if (key.length !== 32) throw new Error(`secret key ${id} must be 32 bytes`);
    this.keyIds = keys.map((k) => k.id);
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
  }

  seal(plain: string): string {
    const id = this.keyIds[0];
    if (id === undefined) return plain;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(id)!, iv);
    cipher.setAAD(Buffer.from(`${VERSION}:${id}`));
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${id}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
  }

  open(stored: string): string {
    const parts = parse(stored);
    if (parts === null) return stored;
    const key = this.keys.get(parts.id);
    if (!key) throw new Error(`the secret is sealed with key "${parts.id}", which is not configured`);
    const bytes = Buffer.from(parts.data, 'base64');
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new Error(`the secret sealed with key "${parts.id}" is truncated`);
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(`${VERSION}:${parts.id}`));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`the secret sealed with key "${parts.id}" does not open with it (altered, or another key of that id)`);
    }
  }

  keyIdOf(stored: string): string | null {
    return parse(stored)?.id ?? null;
  }

  isStale(stored: string): boolean {
    const current = this.keyIds[0];
    return current !== undefined && this.keyIdOf(stored) !== current;
  }
}

function parse(stored: string): { id: string; data: string } | null {
  const match = /^v1:([^:]+):([A-Za-z0-9+/=]*)$/.exec(stored);
  return match ? { id: match[1]!, data: match[2]! } : null;
}
