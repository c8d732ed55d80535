import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SecretKey } from './aes-gcm-secret.cipher.js';

/** The embedded profile's own key, beside its database: `<id>:<base64 of 32 bytes>`, readable by its owner only. */
export const LOCAL_SECRET_KEY_FILE = 'secrets.key';

/**
 * The embedded profile's key in `DATA_DIR`: read it, or (with `create`) make it once, so the demo needs no set-up and
 * its secrets are still not plain text in the database file. Several processes sharing the directory may start at
 * once: the key is written whole to a file of its own, then linked in place (which fails if one is there), so a
 * process that loses the race reads the winner's complete key.
 */
export function localSecretKey(dataDir: string, options: { create: boolean }): SecretKey | null {
  const file = path.join(dataDir, LOCAL_SECRET_KEY_FILE);
  const existing = readKeyFile(file);
  if (existing || !options.create) return existing;
  mkdirSync(dataDir, { recursive: true });
  const id = `local-${randomBytes(4).toString('hex')}`;
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(draft, `${id}:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(draft, { force: true });
  }
  return readKeyFile(file);
}

function readKeyFile(file: string): SecretKey | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const match = /^([A-Za-z0-9_.-]{1,32}):([A-Za-z0-9+/=]+)\s*$/.exec(text);
  const key = match ? Buffer.from(match[2]!, 'base64') : null;
  if (!match || key?.length !== 32) throw new Error(`${file} is not a secret key file (<id>:<base64 of 32 bytes>); restore it from a backup`);
  return { id: match[1]!, key };
}
