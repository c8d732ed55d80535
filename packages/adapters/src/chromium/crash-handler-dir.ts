import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A browser's own crash database: Chromium's crash handlers outlive their browser under load, and the directory on their
 * command line tells this browser's from any other's (docs/contribute/decisions/0028-chromium-crash-handlers.md).
 */
export class CrashHandlerDir {
  private released: Promise<number> | null = null;

  private constructor(readonly path: string) {}

  /** `logi-chromium-crash-<pid>-XXXXXX`: the pid of the process that made it, so what a killed process left can be told. */
  static async create(): Promise<CrashHandlerDir> {
    return new CrashHandlerDir(await mkdtemp(join(tmpdir(), `${PREFIX}${process.pid}-`)));
  }

  /** The environment for the browser process: the parent's, with the crash database set. */
  env(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    env.BREAKPAD_DUMP_LOCATION = this.path;
    return env;
  }

  /**
   * Kills this browser's crash handlers and removes the directory, once (call it once the browser is gone or disconnected);
   * resolves with how many there were. It first waits for the browser's own processes, one of which could make the directory
   * again (docs/contribute/decisions/0028-chromium-crash-handlers.md); `waitForBrowser: false` for a browser that never came up.
   */
  release(options: { waitForBrowser?: boolean } = {}): Promise<number> {
    this.released ??= (async () => {
      if (options.waitForBrowser !== false) await browserProcessesExited(this.path);
      const killed = await killCrashHandlers(this.path);
      await rm(this.path, { recursive: true, force: true }).catch(() => undefined);
      return killed;
    })();
    return this.released;
  }
}

const PREFIX = 'logi-chromium-crash-';

/** Live crash handlers by pid, each with the crash database its command line names; null without /proc. */
async function crashHandlers(): Promise<Map<string, string> | null> {
  const found = new Map<string, string>();
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return null;
  }
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (pid) => {
        try {
          const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
          if (!argv[0]?.endsWith('chrome_crashpad_handler')) return;
          const database = argv.find((arg) => arg.startsWith('--database='));
          if (database) found.set(pid, database.slice('--database='.length));
        } catch {
          // gone meanwhile, or not ours to read
        }
      }),
  );
  return found;
}

async function killCrashHandlers(database: string): Promise<number> {
  const mine = [...((await crashHandlers()) ?? [])].filter(([, named]) => named === database).map(([pid]) => pid);
  let killed = 0;
  await Promise.all(
    mine.map(async (pid) => {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        return; // exited on its own meanwhile
      }
      killed += 1;
      await exited(pid);
    }),
  );
  return killed;
}

/**
 * Removes crash directories left by killed workers: named by no live handler
 * (on Linux; elsewhere none is removed) and older than `minAgeMs`, so that one
 * whose browser is still starting is left alone. Resolves how many went.
 */
export async function sweepCrashHandlerDirs(minAgeMs = 10 * 60_000): Promise<number> {
  const handlers = await crashHandlers();
  if (!handlers) return 0;
  const root = tmpdir();
  const entries = await readdir(root).catch(() => [] as string[]);
  const named = new Set(handlers.values());
  let removed = 0;
  for (const entry of entries.filter((name) => name.startsWith(PREFIX))) {
    const dir = join(root, entry);
    if (named.has(dir)) continue;
    const info = await stat(dir).catch(() => null);
    if (!info?.isDirectory() || Date.now() - info.mtimeMs < minAgeMs) continue;
    await rm(dir, { recursive: true, force: true }).then(
      () => removed++,
      () => undefined,
    );
  }
  return removed;
}

const EXIT_WAIT_MS = 2_000;
/** A closed or killed browser's processes are gone within milliseconds; a hung one is not waited on for longer. */
const BROWSER_EXIT_WAIT_MS = 5_000;

/** Resolves when no live process but a crash handler has `database` in its environment, or after BROWSER_EXIT_WAIT_MS; at once without /proc. */
async function browserProcessesExited(database: string): Promise<void> {
  const deadline = Date.now() + BROWSER_EXIT_WAIT_MS;
  while (Date.now() < deadline) {
    const users = await browserProcessesUsing(database);
    if (users === null || users === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** How many live processes other than crash handlers carry `BREAKPAD_DUMP_LOCATION=database`; null without /proc. */
async function browserProcessesUsing(database: string): Promise<number | null> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return null;
  }
  const wanted = `BREAKPAD_DUMP_LOCATION=${database}`;
  const using = await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (pid) => {
        try {
          // A zombie's environment reads empty: it has exited.
          if (!(await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0').includes(wanted)) return false;
          const argv0 = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0')[0] ?? '';
          return !argv0.endsWith('chrome_crashpad_handler');
        } catch {
          return false; // gone meanwhile, or not ours to read
        }
      }),
  );
  return using.filter(Boolean).length;
}

/** Resolves when the process is gone or a zombie (exited; init reaps it), or after EXIT_WAIT_MS. */
async function exited(pid: string): Promise<void> {
  const deadline = Date.now() + EXIT_WAIT_MS;
  while (Date.now() < deadline) {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return;
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
