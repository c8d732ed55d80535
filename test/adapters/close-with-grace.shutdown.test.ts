import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURE = path.join(ROOT, 'test/support/graceful-exit.fixture.ts');

interface Run {
  code: number | null;
  /** From the first signal sent to the exit. */
  stoppingMs: number;
  messages: string[];
  lines: Array<Record<string, unknown>>;
}

/**
 * Starts the fixture and gives its exit code and log; `signals` go one at a time, the first once it is
 * ready, each next one once it logs that it is shutting down (the OS would merge two sent at once).
 */
function run(env: Record<string, string>, signals: NodeJS.Signals[] = []): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const pending = [...signals];
  let firstSignalAt = 0;
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const sent = signals.length - pending.length;
    const cue = sent === 0 ? '"msg":"ready"' : '"msg":"shutting down"';
    if (pending.length === 0 || !output.includes(cue)) return;
    firstSignalAt ||= Date.now();
    child.kill(pending.shift());
  });
  return new Promise((resolve) =>
    child.once('close', (code) => {
      const lines = output
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ code, lines, messages: lines.map((line) => String(line.msg)), stoppingMs: Date.now() - firstSignalAt });
    }),
  );
}

function lineOf(lines: Array<Record<string, unknown>>, msg: string): Record<string, unknown> {
  const line = lines.find((candidate) => candidate.msg === msg);
  expect(line, msg).toBeDefined();
  return line!;
}

describe('exitGracefully (the exit path of the API and the worker)', { timeout: 180_000 }, () => {
  it.concurrent('when SIGTERM arrives, then it stops and exits 0', async () => {
    const { code, messages, lines } = await run({ STOP_MS: '100' }, ['SIGTERM']);
    expect(messages).toEqual(['ready', 'shutting down', 'stopped']);
    expect(lineOf(lines, 'shutting down')).toMatchObject({ signal: 'SIGTERM', level: 30 });
    expect(code).toBe(0);
  });

  it.concurrent('when SIGINT arrives, then it stops and exits 0 the same way', async () => {
    const { code, lines } = await run({ STOP_MS: '100' }, ['SIGINT']);
    expect(lines.map((line) => [line.msg, line.signal])).toEqual([
      ['ready', undefined],
      ['shutting down', 'SIGINT'],
      ['stopped', undefined],
    ]);
    expect(code).toBe(0);
  });

  it.concurrent('when stopping fails, then the failure is logged and it exits 1', async () => {
    const { code, messages, lines } = await run({ STOP_MS: '100', STOP_FAILS: '1' }, ['SIGTERM']);
    expect(messages).toEqual(['ready', 'shutting down', 'shutdown failed']);
    expect((lineOf(lines, 'shutdown failed').err as { message: string }).message).toBe('could not close');
    expect(code).toBe(1);
  });

  it.concurrent('when stopping outlasts the limit, then it exits 1 at the limit', async () => {
    const { code, messages, lines, stoppingMs } = await run({ STOP_MS: '30000', LIMIT_MS: '500' }, ['SIGTERM']);
    expect(messages).toEqual(['ready', 'shutting down', 'shutdown took too long; exiting']);
    expect(lines[2]).toMatchObject({ limitMs: 500 });
    expect(code).toBe(1);
    expect(stoppingMs).toBeLessThan(10_000);
  });

  it.concurrent('when a second signal arrives while it stops, then it exits 1 at once', async () => {
    const { code, messages, stoppingMs } = await run({ STOP_MS: '30000', LIMIT_MS: '30000' }, ['SIGTERM', 'SIGTERM']);
    expect(messages).toEqual(['ready', 'shutting down', 'second signal while stopping; exiting now']);
    expect(code).toBe(1);
    expect(stoppingMs).toBeLessThan(10_000);
  });

  it.concurrent.for(['rejection', 'exception'])('when an unhandled %s happens, then it is logged as fatal, the process stops and exits 1', async (trigger) => {
    const { code, lines } = await run({ TRIGGER: trigger });
    const fatal = lines.find((line) => line.msg === 'unhandled error; stopping');
    expect(fatal).toMatchObject({ level: 60 });
    expect((fatal!.err as { message: string }).message).toBe(trigger === 'rejection' ? 'nobody caught me' : 'thrown in a timer');
    expect(lines.at(-1)?.msg).toBe('stopped');
    expect(code).toBe(1);
  });
});
