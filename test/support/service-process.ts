import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { vi } from 'vitest';
import { withTestSecretKey } from './test-secret-key.js';

/** A service process (API, worker, CLI) started as an operator starts it: its output and JSON log lines kept. */
export class ServiceProcess {
  readonly logs: Array<Record<string, unknown>> = [];
  readonly output: string[] = [];
  private constructor(
    readonly child: ChildProcess,
    readonly exited: Promise<number | null>,
    private readonly group: boolean,
  ) {}

  /**
   * `group`: the process leads a process group of its own, and stop() signals the whole group, as a
   * terminal's Ctrl-C does (for `pnpm start` and the like, where the service is pnpm's child).
   */
  static start(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; group?: boolean }): ServiceProcess {
    const group = options.group ?? false;
    const child = spawn(command, args, { cwd: options.cwd, env: withTestSecretKey(options.env), stdio: ['ignore', 'pipe', 'pipe'], detached: group });
    const service = new ServiceProcess(child, new Promise((resolve) => child.once('exit', (code) => resolve(code))), group);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      service.output.push(line);
      try {
        service.logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
    });
    readline.createInterface({ input: child.stderr }).on('line', (line) => service.output.push(line));
    return service;
  }

  /** Until `url` answers 200 (vitest's poll of that state); fails at once if the process exits first. */
  async ready(url: string, timeoutMs = 60_000): Promise<void> {
    const exited = () => new Error(`exited with ${this.child.exitCode} before ${url} was ready:\n${this.output.join('\n')}`);
    await vi
      .waitFor(
        async () => {
          if (this.child.exitCode !== null) return;
          const status = await fetch(url).then(
            (response) => response.status,
            () => 0,
          );
          if (status !== 200) throw new Error(`${url} answered ${status || 'nothing'}`);
        },
        { timeout: timeoutMs, interval: 100 },
      )
      .catch((error: unknown) => {
        throw new Error(`${url} not ready within ${timeoutMs / 1000} s (${String(error)}):\n${this.output.join('\n')}`);
      });
    if (this.child.exitCode !== null) throw exited();
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      if (this.group) process.kill(-this.child.pid!, signal);
      else this.child.kill(signal);
    }
    return this.exited;
  }
}
