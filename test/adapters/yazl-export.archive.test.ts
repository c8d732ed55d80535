import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { YazlExportArchive } from '@logi/adapters';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('YazlExportArchive', () => {
  it('when a member is added, then its Buffer is released once the next is in the ZIP, long before the archive ends (at most one member held)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'logi-zip-'));
    dirs.push(dir);
    const builder = await new YazlExportArchive(dir).create({ exportId: 1, attempt: 1 });
    const released: Array<WeakRef<Buffer>> = [];
    for (let i = 0; i < 5; i += 1) {
      const pdf = Buffer.alloc(1024 * 1024, i + 1);
      released.push(new WeakRef(pdf));
      await builder.add(`pdf/${i}.pdf`, pdf);
    }
    await vi.waitFor(() => {
      gc();
      // The last member's bytes may still be on their way to the file.
      expect(released.slice(0, -1).map((ref) => ref.deref() === undefined)).toEqual([true, true, true, true]);
    });
    const archive = await builder.finish();
    expect(archive.size).toBe((await readFile(archive.localPath)).length);
    expect(archive.size).toBeGreaterThan(5 * 1024 * 1024);
    await builder.discard();
  });
});
