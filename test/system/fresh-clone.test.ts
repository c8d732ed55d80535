import { execFile } from 'node:child_process';
import { mkdtemp, rm, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { ProductionStack } from '../support/production-stack.js';
import { ServiceProcess } from '../support/service-process.js';

/**
 * Issue 24: the contract's command line on a fresh clone, as a user runs it:
 * `pnpm install`, then `pnpm start`, `pnpm cli` and `pnpm worker` with no
 * `pnpm build` before them. They build first (once, when started together),
 * and again only when a source is newer than the build.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const BUILDING = /^==> building first \((.+)\)/;
/** The service's configuration: none leaks in from the test run (embedded defaults unless a test sets them). */
const CONFIG_VARIABLES =
  /^(HOST|PORT|DATA_DIR|DATABASE_URL|DATABASE_READ_URL|DB_.*|REDIS_.*|S3_.*|METRICS_.*|DASHBOARD_.*|LOG_LEVEL|EVENTS_.*|WEBHOOK_.*|SECRETS_.*|HTTP_.*|NODE_OPTIONS|NODE_ENV|VITEST.*|API_TEST_.*)$/;

let clone: string;
let dataDir: string;

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!CONFIG_VARIABLES.test(key)) base[key] = value;
  return { ...base, npm_config_nodedir: '/usr', HOST: '127.0.0.1', DATA_DIR: dataDir, METRICS_PORT: '0', ...extra };
}

function pnpm(args: string[], extra: Record<string, string> = {}): ServiceProcess {
  return ServiceProcess.start('pnpm', args, { cwd: clone, env: env(extra), group: true });
}

/** The reasons given by the launchers that built. */
function builds(...services: ServiceProcess[]): string[] {
  return services.flatMap((service) => service.output.map((line) => BUILDING.exec(line)?.[1]).filter((reason): reason is string => reason !== undefined));
}

function answering(url: string): Promise<boolean> {
  return fetch(url).then(
    () => true,
    () => false,
  );
}

beforeAll(async () => {
  clone = await mkdtemp(path.join(os.tmpdir(), 'logi-fresh-clone-'));
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-fresh-clone-data-'));
  await run('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone]);
  // From the store this machine's install filled: no registry needed, and better-sqlite3's build is cached.
  await run('pnpm', ['install', '--frozen-lockfile', '--offline', '--reporter=silent'], { cwd: clone, env: env(), timeout: 300_000 });
}, 360_000);

afterAll(async () => {
  if (clone) await rm(clone, { recursive: true, force: true });
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('a fresh clone after pnpm install, with no build', () => {
  it('when pnpm start and pnpm cli run together, then one of them builds, the CLI migrates, and the API makes its own embedded schema and serves', async () => {
    const port = await freePort();
    const apiDataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-fresh-clone-api-'));
    const api = pnpm(['start'], { PORT: String(port), DATA_DIR: apiDataDir });
    const migrate = pnpm(['cli', 'db:migrate']);
    try {
      expect(await migrate.exited).toBe(0);
      await api.ready(`http://127.0.0.1:${port}/health/live`, 240_000);
      const live = (await (await fetch(`http://127.0.0.1:${port}/health/live`)).json()) as { data: { status: string } };
      expect(live.data.status).toBe('live');
      // A request that reads the clients table: an envelope 401, not a missing table's 500.
      const unknown = await fetch(`http://127.0.0.1:${port}/v1/invoices`, { headers: { Authorization: 'Bearer nobody', 'X-Client-Directory': 'nobody' } });
      expect(unknown.status).toBe(401);
      expect(((await unknown.json()) as { status: number }).status).toBe(401);
      expect(builds(api, migrate)).toEqual(['no build yet']);
      expect([...api.output, ...migrate.output].join('\n')).not.toMatch(/^[ \t]+at /m);
    } finally {
      await api.stop('SIGINT');
    }
    // Ctrl-C stopped the API itself, not only pnpm: nothing answers on its port.
    await expect.poll(() => answering(`http://127.0.0.1:${port}/health/live`), { timeout: 15_000 }).toBe(false);
    await rm(apiDataDir, { recursive: true, force: true });
  }, 300_000);

  it('when the build is current, then the CLI starts without building', async () => {
    const cli = pnpm(['cli', 'db:migrate']);
    expect(await cli.exited).toBe(0);
    expect(builds(cli)).toEqual([]);
  }, 120_000);

  it('when a source is newer than the build, then pnpm worker builds first and its worker answers /health/live', async () => {
    const now = new Date();
    await utimes(path.join(clone, 'packages/worker/src/main.ts'), now, now);
    const stack = await ProductionStack.start('fresh-clone');
    const metricsPort = await freePort();
    const worker = pnpm(['worker'], { ...stack.env, METRICS_PORT: String(metricsPort) });
    try {
      await worker.ready(`http://127.0.0.1:${metricsPort}/health/live`, 240_000);
      expect(builds(worker)).toEqual(['sources changed since the last build']);
    } finally {
      await worker.stop('SIGINT');
      await stack.stop();
    }
    await expect.poll(() => answering(`http://127.0.0.1:${metricsPort}/health/live`), { timeout: 15_000 }).toBe(false);
  }, 300_000);
});
