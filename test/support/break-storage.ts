import { mkdir, rename, rm, writeFile } from 'node:fs/promises';

/**
 * Makes local file storage fail for real: its directory becomes a plain file,
 * so every write under it fails (ENOTDIR) even for root, which ignores
 * permission bits. Returns a function that puts the directory back.
 */
export async function replaceDirectoryWithFile(directory: string): Promise<() => Promise<void>> {
  await mkdir(directory, { recursive: true });
  const aside = `${directory}.aside-${process.pid}-${Date.now()}`;
  await rename(directory, aside);
  await writeFile(directory, 'not a directory');
  return async () => {
    await rm(directory, { force: true });
    await rename(aside, directory);
  };
}
