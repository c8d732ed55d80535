import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { withTestSecretKey } from './test-secret-key.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MAIN = path.join(ROOT, 'packages/api/src/main.ts');

/** This process's environment without the OTEL_* variables a developer's shell may set. */
export function envWithoutOtel(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
}

/** A real `pnpm start` process (through tsx directly), its log lines and stderr kept. */
export class ApiProcess {
  readonly logs: Array<Record<string, unknown>> = [];
  private stderr = '';
  private listening: Promise<string>;

  private constructor(private readonly child: ChildProcess) {
    child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.listening = new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          this.logs.push(entry);
          if (entry.msg === 'API listening' && typeof entry.url === 'string') resolve(entry.url);
        } catch {
          // not a log line
        }
      });
      child.once('exit', (code) => reject(new Error(`API exited with ${code}: ${this.stderr}`)));
    });
    this.listening.catch(() => undefined);
  }

  /** Starts it with `env` over this process's environment less OTEL_*; `nodeArgs` come before the entry point. Resolves once it listens. */
  static async start(env: Record<string, string>, nodeArgs: string[] = []): Promise<ApiProcess & { url: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, MAIN], {
      cwd: ROOT,
      env: withTestSecretKey({ ...envWithoutOtel(), LOG_LEVEL: 'info', METRICS_PORT: '0', PORT: '0', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const api = new ApiProcess(child);
    return Object.assign(api, { url: await api.listening });
  }

  /** What it wrote on stderr so far. */
  get errors(): string {
    return this.stderr;
  }

  /** SIGTERM, as an orchestrator stops it; resolves with the exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.kill('SIGTERM');
    return exited;
  }
}
