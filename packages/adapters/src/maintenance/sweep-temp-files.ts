import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Removes upload temp files (`*.part`) older than `olderThan` from `dir`:
 * every request removes its own, but a process that was killed mid-upload
 * cannot. Returns how many were removed.
 */
export async function sweepTempFiles(dir: string, olderThan: Date): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    if (!name.endsWith('.part')) continue;
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => null);
    if (info && info.mtime < olderThan) {
      await rm(file, { force: true });
      removed += 1;
    }
  }
  return removed;
}
