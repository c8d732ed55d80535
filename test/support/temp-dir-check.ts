import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Shared by the projects' setups: vitest runs this module once per project, in one process. */
interface RunTempDir {
  dir: string;
  previous: string | undefined;
  users: number;
}
const state = globalThis as typeof globalThis & { __logiRunTempDir?: RunTempDir };

/** What the tests and the code they drive make in the temp dir, each removed by whoever made it. */
const OURS = /^logi-/;

/**
 * Vitest global setup: holds the tests to "tests remove what they make". The
 * run gets a temp dir of its own (TMPDIR, which os.tmpdir() reads and every
 * test process and the processes they start inherit), so that what other
 * runs on the machine make at the same time is never taken for this run's.
 * At the end a `logi-*` entry left in it (a test's data dir, a browser's
 * crash dir) fails the run, naming it; what Chromium, playwright and tsx keep
 * there for themselves goes with the directory.
 */
export default async function setup(): Promise<() => Promise<void>> {
  if (!state.__logiRunTempDir) {
    const previous = process.env.TMPDIR;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vitest-run-'));
    process.env.TMPDIR = dir;
    state.__logiRunTempDir = { dir, previous, users: 0 };
  }
  const run = state.__logiRunTempDir;
  run.users += 1;
  return async () => {
    run.users -= 1;
    if (run.users > 0) return;
    state.__logiRunTempDir = undefined;
    if (run.previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = run.previous;
    const left = await Promise.all(
      (await readdir(run.dir))
        .filter((name) => OURS.test(name))
        .sort()
        .map((name) => describeEntry(run.dir, name)),
    );
    await rm(run.dir, { recursive: true, force: true });
    if (left.length > 0) {
      // Vitest only logs an error thrown here and exits 0: the exit code is set instead.
      console.error(`\nFAIL the tests left ${left.length} entries in the temp dir (tests remove what they make):\n  ${left.join('\n  ')}\n`);
      process.exitCode = 1;
    }
  };
}

/** An entry with its age and what it holds, to tell who left it. */
async function describeEntry(dir: string, name: string): Promise<string> {
  const full = path.join(dir, name);
  const info = await stat(full).catch(() => null);
  const inside = info?.isDirectory() ? await readdir(full).catch(() => [] as string[]) : null;
  const age = info ? `${Math.round((Date.now() - info.mtimeMs) / 1000)} s old` : 'gone';
  return `${name} (${age}${inside ? `, ${inside.length ? `holds ${inside.slice(0, 8).join(', ')}` : 'empty'}` : ''})`;
}
