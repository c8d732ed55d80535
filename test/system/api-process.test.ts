import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnex, loadFixtures, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { authHeaders } from '../support/api-harness.js';
import { testFixture } from '../support/test-fixture.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const MAIN = path.join(ROOT, 'packages/api/src/main.ts');

function runApi(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', MAIN], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

describe('the API process', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-process-'));
    const knex = createKnex({ databaseUrl: null, dataDir });
    await migrateLatest(knex);
    await loadFixtures(knex, testFixture, { hasher: new Sha256ApiKeyHasher() });
    await knex.destroy();
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  // Each one a process start of its own and nothing shared: run at once.
  it.concurrent.for([
    ['PORT', 'abc'],
    ['RATE_LIMIT_MAX', '0'],
    ['DATABASE_URL', 'postgres://x@y/z'],
    ['REDIS_URL', 'not a url'],
    ['APP_TIMEZONE', 'Mars/Olympus'],
    ['UPLOAD_MAX_FILES', '2.5'],
    ['PORT', '70000'],
    ['METRICS_PORT', '65536'],
    ['HOST', 'no.such.host.invalid'],
    // TEST-NET-3: a valid address that is on no machine here.
    ['HOST', '203.0.113.1'],
  ] as Array<[string, string]>)(
    'when %s is set to %j, then it stops at start with one line naming it',
    { timeout: 120_000 },
    async ([variable, value], { expect }) => {
      const { code, stderr } = await exitOf(runApi({ DATA_DIR: dataDir, [variable]: value }));
      expect(code).toBe(1);
      const lines = stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(variable);
    },
  );

  it('when PORT is taken by another process, then it stops at start with one line naming PORT', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as net.AddressInfo).port);
      const { code, stderr } = await exitOf(runApi({ DATA_DIR: dataDir, PORT: port }));
      expect(code).toBe(1);
      const lines = stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('PORT');
      expect(lines[0]).toContain('in use');
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('when a variable is empty, then it counts as unset', async () => {
    const child = runApi({ DATA_DIR: dataDir, PORT: '0', REDIS_URL: '', DATABASE_URL: '' });
    const url = await listeningUrl(child);
    expect((await fetch(`${url}/health/live`)).status).toBe(200);
    child.kill('SIGTERM');
    expect((await exitOf(child)).code).toBe(0);
  });

  it('when SIGTERM arrives during a request, then the request completes and the process exits 0', async () => {
    // A browser that takes 2 s to start: once its launcher runs, the PDF request is surely in flight.
    const slowBrowser = path.join(dataDir, 'slow-chromium');
    await writeFile(slowBrowser, '#!/bin/sh\nsleep 2\nexec /usr/bin/chromium "$@"\n', { mode: 0o755 });
    const child = runApi({ DATA_DIR: dataDir, PORT: '0', CHROMIUM_PATH: slowBrowser });
    const exited = exitOf(child);
    const url = await listeningUrl(child);
    const inFlight = fetch(`${url}/v1/invoices/9001/pdf`, { headers: authHeaders('baltic') });
    await expect.poll(() => hasChildProcess(child.pid!), { timeout: 20_000 }).toBe(true);
    child.kill('SIGTERM');
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(
      Buffer.from(await response.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    expect((await exited).code).toBe(0);
    await expect(fetch(`${url}/health/live`)).rejects.toThrow();
  });

  it('when SIGTERM arrives while a request waits on its job longer than 10 s, then the grace covers the job timeout and the request gets its answer', async () => {
    // The render job takes over 11 s (a browser slow to start), within JOB_TIMEOUT_MS (30 s) and the render limit.
    const slowerBrowser = path.join(dataDir, 'slower-chromium');
    await writeFile(slowerBrowser, '#!/bin/sh\nsleep 11\nexec /usr/bin/chromium "$@"\n', { mode: 0o755 });
    const child = runApi({ DATA_DIR: dataDir, PORT: '0', CHROMIUM_PATH: slowerBrowser, PDF_RENDER_TIMEOUT_MS: '25000' });
    const exited = exitOf(child);
    const url = await listeningUrl(child);
    const started = Date.now();
    const inFlight = fetch(`${url}/v1/invoices/9002/pdf`, { headers: authHeaders('baltic') });
    await expect.poll(() => hasChildProcess(child.pid!), { timeout: 20_000 }).toBe(true);
    child.kill('SIGTERM');
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(
      Buffer.from(await response.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    // Past the old fixed 10 s grace, which would have cut this client off.
    expect(Date.now() - started).toBeGreaterThan(10_000);
    const answered = Date.now();
    expect((await exited).code).toBe(0);
    // The client's kept-alive connection does not hold the exit once its answer is out.
    expect(Date.now() - answered).toBeLessThan(4_000);
  }, 45_000);
});

async function hasChildProcess(pid: number): Promise<boolean> {
  try {
    await run('pgrep', ['-P', String(pid)]);
    return true;
  } catch {
    return false;
  }
}

function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error('API did not start')), 30_000);
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'API listening' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => reject(new Error(`API exited with ${code}`)));
  });
}
