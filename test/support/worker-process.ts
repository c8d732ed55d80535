import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { removeCrashDirsOf } from './crash-dirs.js';
import { withTestSecretKey } from './test-secret-key.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * A `runUnder` that drops CAP_SYS_NICE, as the image runs its workers (USER node): root has it, and a root Chromium
 * sets its processes' priorities itself, undoing a bulk-only worker's nice 10 (ADR 0053).
 */
export const WITHOUT_CAP_SYS_NICE = ['setpriv', '--bounding-set', '-sys_nice', '--inh-caps', '-sys_nice', '--'];

/** A real `pnpm worker` process (run through tsx directly, to skip pnpm's start-up). */
export class WorkerProcess {
  readonly logs: Array<Record<string, unknown>> = [];

  private constructor(private readonly child: ChildProcess) {}

  /** `runUnder`: a command the worker is run through (`setpriv ... --`), which must exec it in place (same pid). */
  static async start(env: Record<string, string>, options: { runUnder?: string[] } = {}): Promise<WorkerProcess> {
    const command = [...(options.runUnder ?? []), process.execPath, '--import', 'tsx', path.join(ROOT, 'packages/worker/src/main.ts')];
    const child = spawn(command[0]!, command.slice(1), {
      cwd: ROOT,
      env: withTestSecretKey({ ...process.env, LOG_LEVEL: 'info', METRICS_PORT: '0', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker = new WorkerProcess(child);
    const stderr: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const lines = readline.createInterface({ input: child.stdout });
      const timer = setTimeout(() => reject(new Error(`worker did not start in time: ${stderr.join('')}`)), 60_000);
      lines.on('line', (line) => {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          worker.logs.push(entry);
          if (entry.msg === 'worker started') {
            clearTimeout(timer);
            resolve();
          }
        } catch {
          // not a log line
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`worker exited with ${code}: ${stderr.join('')}`));
      });
    });
    return worker;
  }

  get pid(): number {
    return this.child.pid!;
  }

  private get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Kills the process at once, as a crash or an OOM kill would; what it had in the temp dir goes too. */
  async kill(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
    await removeCrashDirsOf(this.pid);
  }

  /** Graceful stop; resolves with the exit code. */
  async stop(): Promise<number | null> {
    if (this.exited) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.kill('SIGTERM');
    return exited;
  }
}
