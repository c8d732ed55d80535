import { readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { allProcesses, crashDatabaseOf, environOf, type ProcessInfo } from './process-tree.js';

/**
 * The crash directories a process made for its browsers (the renderer names
 * them `logi-chromium-crash-<pid>-*` in the temp dir).
 */
export async function crashDirsOf(pid: number): Promise<string[]> {
  const prefix = `logi-chromium-crash-${pid}-`;
  const entries = await readdir(os.tmpdir()).catch(() => [] as string[]);
  return entries.filter((name) => name.startsWith(prefix)).map((name) => path.join(os.tmpdir(), name));
}

/** How long the browsers of a killed process get to exit (they do once its DevTools pipe is closed). */
const BROWSERS_EXIT_MS = 10_000;

/**
 * For a process killed outright (SIGKILL), what its renderer would have done
 * on closing each browser: once its browsers have exited, kills the crash
 * handlers that name one of its crash directories (double-forked to init,
 * they outlive it for a while) and removes those directories. Removing them
 * any earlier does not last: a Chromium process still on its way out makes
 * its crash directory again. A test that kills a worker cleans up after it
 * with this; the service itself leaves them to the next renderer's sweep.
 */
export async function removeCrashDirsOf(pid: number): Promise<void> {
  const dirs = new Set(await crashDirsOf(pid));
  if (dirs.size === 0) return;
  const deadline = Date.now() + BROWSERS_EXIT_MS;
  for (;;) {
    const using = processesUsing(dirs);
    const handlers = using.filter((p) => crashDatabaseOf(p) !== null);
    for (const handler of handlers) {
      try {
        process.kill(handler.pid, 'SIGKILL');
      } catch {
        // exited on its own meanwhile
      }
    }
    if (using.length === 0 || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await Promise.all([...dirs].map((dir) => rm(dir, { recursive: true, force: true })));
}

/** Live (not zombie) processes that name one of `dirs`: crash handlers on their command line, browsers in their environment. */
function processesUsing(dirs: Set<string>): ProcessInfo[] {
  return allProcesses().filter((p) => p.state !== 'Z' && (dirs.has(crashDatabaseOf(p) ?? '') || dirs.has(environOf(p.pid).BREAKPAD_DUMP_LOCATION ?? '')));
}
