import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { withTestSecretKey } from '../support/test-secret-key.js';

/**
 * Every child process the benchmark starts (API servers, floor servers,
 * workers, the reindex CLI) is tracked here, so that any way out of the run
 * (an error, Ctrl-C, SIGTERM, a normal end) kills them: nothing is left
 * listening after `pnpm bench`.
 */
const children = new Set<ChildProcess>();
const cleanups = new Set<() => Promise<void>>();
let installed = false;

export function spawnTracked(command: string, args: string[], options: SpawnOptions): ChildProcess {
  installHandlers();
  // A production-profile process (DATABASE_URL set) needs a key; the tests' one unless the caller gives its own.
  const child = spawn(command, args, options.env ? { ...options, env: withTestSecretKey(options.env) } : options);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Work to run (best effort, bounded) before the process ends, whichever way it ends. */
export function onCleanup(work: () => Promise<void>): () => void {
  installHandlers();
  cleanups.add(work);
  return () => cleanups.delete(work);
}

function killAllNow(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
}

/** Runs the registered cleanups (each at most 10 s), then kills what is left. */
export async function cleanupAll(): Promise<void> {
  const pending = [...cleanups];
  cleanups.clear();
  await Promise.all(
    pending.map((work) =>
      Promise.race([
        work().catch((error: unknown) => console.error(`cleanup failed: ${String(error)}`)),
        new Promise((resolve) => setTimeout(resolve, 10_000).unref()),
      ]),
    ),
  );
  killAllNow();
}

function installHandlers(): void {
  if (installed) return;
  installed = true;
  process.once('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping the benchmark and its child processes`);
      void cleanupAll().finally(() => process.exit(130));
    });
  }
  process.on('unhandledRejection', (error) => {
    console.error('bench: unhandled rejection:', error);
    void cleanupAll().finally(() => process.exit(1));
  });
}

/** Waits for a child to exit; SIGTERM first, SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Keeps the last lines a child wrote, for error messages. */
export class OutputTail {
  private readonly lines: string[] = [];
  constructor(private readonly max = 40) {}
  push(chunk: Buffer | string): void {
    for (const line of chunk.toString().split('\n')) {
      if (line.trim() === '') continue;
      this.lines.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
      if (this.lines.length > this.max) this.lines.shift();
    }
  }
  toString(): string {
    return this.lines.join('\n');
  }
}

/**
 * Node flags for the API and worker children, from BENCH_CHILD_NODE_ARGS (space-separated):
 * `--cpu-prof --cpu-prof-dir=...` profiles them (Node refuses --cpu-prof in NODE_OPTIONS).
 */
export function childNodeArgs(): string[] {
  return (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);
}
