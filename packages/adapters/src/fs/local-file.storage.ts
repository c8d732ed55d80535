import { randomUUID } from 'node:crypto';
import { access, copyFile, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';
import { StoredObjectMissingError, type ByteRange, type FileStoragePort, type PresignOptions, type StoragePage, type StoredObjectPage } from '@logi/domain';
import { assertValidStorageKey, isValidStorageKey } from '../shared/storage-key.js';

/** Messages for the error codes a client may reasonably see; never a path. */
const READABLE_CODES: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EIO: 'input/output error',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
};

/**
 * Files under one root directory (`<DATA_DIR>/files`). Several processes may
 * share it, so every write lands in a temp file beside its target and is
 * renamed into place: readers see the whole object or none, and a crash
 * leaves at most a dot-named temp file, never a half object under a key.
 */
export class LocalFileStorage implements FileStoragePort {
  private readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  async putFile(key: string, localPath: string, _size: number, _contentType: string): Promise<void> {
    const target = this.pathOf(key);
    await this.atomically(target, (temp) => copyFile(localPath, temp, constants.COPYFILE_EXCL), 'The file could not be stored');
  }

  async putBuffer(key: string, data: Buffer, _contentType: string): Promise<void> {
    const target = this.pathOf(key);
    await this.atomically(target, (temp) => writeFile(temp, data, { flag: 'wx' }), 'The file could not be stored');
  }

  async getBuffer(key: string): Promise<Buffer> {
    const target = this.pathOf(key);
    try {
      return await readFile(target);
    } catch (error) {
      throw storageError(error, key);
    }
  }

  async copy(fromKey: string, toKey: string): Promise<void> {
    const source = this.pathOf(fromKey);
    const target = this.pathOf(toKey);
    await this.atomically(
      target,
      async (temp) => {
        try {
          await copyFile(source, temp, constants.COPYFILE_EXCL);
        } catch (error) {
          throw storageError(error, fromKey);
        }
      },
      'The file could not be stored',
    );
  }

  async delete(key: string): Promise<void> {
    const target = this.pathOf(key);
    try {
      await rm(target, { force: true });
    } catch (error) {
      throw storageError(error, key);
    }
  }

  async exists(key: string): Promise<boolean> {
    const target = this.pathOf(key);
    try {
      await access(target, constants.F_OK);
      return true;
    } catch (error) {
      if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return false;
      throw storageError(error, key);
    }
  }

  async deleteStale(prefix: string, olderThan: Date, limit: number): Promise<number> {
    const dir = path.join(this.root, ...prefix.split('/').filter(Boolean));
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((error: unknown) => {
      if (codeOf(error) === 'ENOENT') return [];
      throw storageError(error);
    });
    let deleted = 0;
    for (const entry of entries) {
      if (deleted >= limit) break;
      if (!entry.isFile()) continue;
      // Objects and the hidden temp files of interrupted atomic writes alike.
      const file = path.join(entry.parentPath, entry.name);
      const info = await stat(file).catch(() => null);
      if (!info || info.mtime >= olderThan) continue;
      await rm(file, { force: true });
      deleted += 1;
    }
    return deleted;
  }

  /**
   * Walks the tree under `prefix` one directory at a time, names sorted, so
   * the order is by key segment (`a/x` before `a-b/x`); the marker is the
   * last key looked at. Only the directories on the marker's path and after
   * it are read, one at a time, so a page holds one directory's names in
   * memory (never the whole tree) and stats at most `limit` files. Dot-named
   * temp files of interrupted writes are not keys and are skipped.
   */
  async listOlderThan(prefix: string, olderThan: Date, page: { limit: number; after: string | null }): Promise<StoragePage> {
    const { objects, next } = await this.listObjects(prefix, page);
    return { keys: objects.filter((object) => object.writtenAt < olderThan).map((object) => object.key), next };
  }

  /** The walk of listOlderThan, with each object's modification time. */
  async listObjects(prefix: string, page: { limit: number; after: string | null }): Promise<StoredObjectPage> {
    const base = prefix.split('/').filter(Boolean);
    const marker = page.after?.split('/') ?? null;
    // A marker from another prefix means nothing here: walk from the start.
    const after = marker && marker.length > base.length && base.every((segment, i) => marker[i] === segment) ? marker.slice(base.length) : null;
    const limit = Math.max(1, Math.floor(page.limit));
    const objects: StoredObjectPage['objects'] = [];
    let looked = 0;
    let last: string | null = null;
    for await (const segments of this.walk(base, [], after)) {
      // One more object exists past the page: the walk goes on from the last one looked at.
      if (looked >= limit) return { objects, next: last };
      const key = [...base, ...segments].join('/');
      const info = await stat(path.join(this.root, ...base, ...segments)).catch((error: unknown) => {
        if (codeOf(error) === 'ENOENT') return null;
        throw storageError(error);
      });
      if (!info) continue;
      looked += 1;
      last = key;
      objects.push({ key, writtenAt: info.mtime });
    }
    return { objects, next: null };
  }

  /** Files under `base/dir`, by segment order, after `after` (segments relative to `base`) when given. */
  private async *walk(base: string[], dir: string[], after: string[] | null): AsyncGenerator<string[]> {
    let entries;
    try {
      entries = await readdir(path.join(this.root, ...base, ...dir), { withFileTypes: true });
    } catch (error) {
      if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return;
      throw storageError(error);
    }
    const names = entries.filter((entry) => isValidStorageKey(entry.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of names) {
      let deeper: string[] | null = null;
      if (after) {
        const head = after[0]!;
        if (entry.name < head) continue;
        if (entry.name === head) {
          // The marker itself was looked at; a file where the marker goes deeper sorts before it.
          if (after.length === 1 || !entry.isDirectory()) continue;
          deeper = after.slice(1);
        }
      }
      if (entry.isDirectory()) yield* this.walk(base, [...dir, entry.name], deeper);
      else if (entry.isFile()) yield [...dir, entry.name];
    }
  }

  /** Proves the root can be written, not merely that it exists. */
  async ping(): Promise<void> {
    const probe = path.join(this.root, `.ping-${randomUUID()}`);
    try {
      await mkdir(this.root, { recursive: true });
      await writeFile(probe, 'ok', { flag: 'wx' });
    } catch (error) {
      throw storageError(error);
    } finally {
      await rm(probe, { force: true }).catch(() => undefined);
    }
  }

  async stat(key: string): Promise<{ size: number }> {
    const target = this.pathOf(key);
    try {
      return { size: (await stat(target)).size };
    } catch (error) {
      throw storageError(error, key);
    }
  }

  /** The file is opened first, so a missing one rejects here; the stream reads it in chunks and closes it. */
  async getStream(key: string, range?: ByteRange): Promise<NodeJS.ReadableStream> {
    const target = this.pathOf(key);
    let handle;
    try {
      handle = await open(target, 'r');
    } catch (error) {
      throw storageError(error, key);
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  /** Local files have no URLs of their own: the API signs its links (see ADR 0040). */
  async presignGet(_key: string, _options: PresignOptions): Promise<string | null> {
    return null;
  }

  private pathOf(key: string): string {
    assertValidStorageKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  private async atomically(target: string, write: (temp: string) => Promise<void>, what: string): Promise<void> {
    const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}.tmp`);
    try {
      await mkdir(path.dirname(target), { recursive: true });
      await write(temp);
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => undefined);
      if (error instanceof Error && error.name === STORAGE_ERROR) throw error;
      throw storageError(error, undefined, what);
    }
  }
}

const STORAGE_ERROR = 'StorageError';

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A message safe to show a client (no paths); the fs error stays as `cause` for the logs. */
function storageError(error: unknown, key?: string, what = 'Storage unavailable'): Error {
  const code = codeOf(error);
  const missing = key !== undefined && (code === 'ENOENT' || code === 'ENOTDIR');
  const reason = code ? `${code}${READABLE_CODES[code] ? ` (${READABLE_CODES[code]})` : ''}` : 'unexpected error';
  if (missing) return new StoredObjectMissingError(key, { cause: error });
  const result = new Error(`${what}: ${reason}`, { cause: error });
  result.name = STORAGE_ERROR;
  return result;
}
