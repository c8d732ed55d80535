import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { ROOT } from './config.js';
import { OutputTail, spawnTracked, stopChild } from './processes.js';

export interface ReceivedSample {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** What the receiver counted: receipt times (wall-clock ms) of the first and the last request. */
export interface Counted {
  count: number;
  first: number;
  last: number;
  samples: ReceivedSample[];
}

/** One request, reported while watching. */
export interface Got {
  at: number;
  webhookId: string;
  path: string;
  body: string;
}

type Message = ({ type: 'counted' } & Counted) | ({ type: 'got' } & Got);

/** The webhook receiver (receiver-server.ts) as a child process with an IPC channel. */
export class ReceiverProcess {
  private counted: ((counted: Counted) => void) | null = null;
  private readonly watchers = new Set<(got: Got) => void>();

  private constructor(
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    child.on('message', (message: Message) => {
      if (message.type === 'counted') this.counted?.(message);
      else for (const watcher of this.watchers) watcher(message);
    });
  }

  /** `delayMs`: every answer that much after the request arrived (a slow receiver). */
  static async start(options: { delayMs?: number } = {}): Promise<ReceiverProcess> {
    const output = new OutputTail();
    const args = options.delayMs ? ['--delay-ms', String(options.delayMs)] : [];
    const child = spawnTracked(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/bench/receiver-server.ts'), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the webhook receiver did not start:\n${output.toString()}`)), 30_000);
      readline.createInterface({ input: child.stdout! }).on('line', (line) => {
        const match = /^listening (\d+)$/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the webhook receiver exited with ${code}:\n${output.toString()}`));
      });
    });
    return new ReceiverProcess(port, child);
  }

  url(suffix: string): string {
    return `http://127.0.0.1:${this.port}${suffix}`;
  }

  /**
   * Counts from zero; resolves when `count` requests have arrived, rejects
   * after `timeoutMs` (the caller says what was expected).
   */
  expect(count: number, timeoutMs: number): { done: Promise<Counted> } {
    this.child.send({ cmd: 'expect', count });
    const done = new Promise<Counted>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.counted = null;
        reject(new Error(`the webhook receiver did not get ${count} requests within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.counted = (counted) => {
        clearTimeout(timer);
        this.counted = null;
        resolve(counted);
      };
    });
    return { done };
  }

  watch(on: boolean): void {
    this.child.send({ cmd: 'watch', on });
  }

  /** The next request (while watching) that `match` accepts. */
  next(match: (got: Got) => boolean, timeoutMs: number): Promise<Got> {
    return new Promise<Got>((resolve, reject) => {
      const watcher = (got: Got) => {
        if (!match(got)) return;
        clearTimeout(timer);
        this.watchers.delete(watcher);
        resolve(got);
      };
      const timer = setTimeout(() => {
        this.watchers.delete(watcher);
        reject(new Error(`no matching webhook within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.watchers.add(watcher);
    });
  }

  async stop(): Promise<void> {
    if (this.child.connected) this.child.disconnect();
    await stopChild(this.child, 5_000);
  }
}
