import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { freePort } from '../support/free-port.js';
import { ServiceProcess } from '../support/service-process.js';
import { ProductionStack } from '../support/production-stack.js';
import { buildRuntimeTree, developmentPackages, filesUnder, installedPackages, type RuntimeTree } from '../support/runtime-tree.js';

/**
 * Issue 19: the image runs built JavaScript with plain `node`. The runtime
 * tree is made as the Dockerfile makes it (its build stage replayed in a
 * temporary directory: install, `pnpm build`, `pnpm deploy --prod`), then
 * the image's commands run from it (the CLI's migration and demo data, the
 * API's CMD, a worker) on MariaDB, Redis and an S3 server, and a PDF and an
 * upload go through them.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const DEMO = { Authorization: 'Bearer demo-key-baltic', 'X-Client-Directory': 'baltic-haulage' };
/** Variables of the service's configuration: none leaks in from the test run. */
const CONFIG_VARIABLES =
  /^(HOST|PORT|DATA_DIR|DATABASE_URL|DATABASE_READ_URL|DB_.*|REDIS_URL|REDIS_PREFIX|REDIS_SENTINEL.*|S3_.*|CHROMIUM_PATH|APP_TIMEZONE|RATE_LIMIT_.*|UPLOAD_MAX_FILES|UPLOAD_QUOTA_MB_PER_DAY|JOB_.*|WORKER_CONCURRENCY|PDF_.*|METRICS_.*|DASHBOARD_.*|TRUST_PROXY|LOG_LEVEL|EVENTS_.*|WEBHOOK_.*|SECRETS_.*|HTTP_.*|NODE_OPTIONS|NODE_ENV|VITEST.*|API_TEST_.*)$/;

let tree: RuntimeTree;
let stack: ProductionStack;
let dataDir: string;

function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!CONFIG_VARIABLES.test(key)) env[key] = value;
  // The image's ENV, then this machine's addresses and directories.
  return { ...env, ...tree.env, ...stack.env, HOST: '127.0.0.1', DATA_DIR: dataDir, CHROMIUM_PATH: '/usr/bin/chromium', LOG_LEVEL: 'info', ...extra };
}

/** One of the image's processes: `command` run with plain node from the tree. */
function startInTree(command: string[], env: Record<string, string>): ServiceProcess {
  expect(command[0]).toBe('node');
  return ServiceProcess.start(process.execPath, command.slice(1), { cwd: tree.dir, env: serviceEnv(env) });
}

/** A command of the image's tree run to its end, as `docker compose run` would. */
async function runInTree(command: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  expect(command[0]).toBe('node');
  return run(process.execPath, command.slice(1), { cwd: tree.dir, env: serviceEnv(env), timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout: string; stderr: string }) => ({ code: Number(error.code ?? 1), stdout: error.stdout, stderr: error.stderr }),
  );
}

beforeAll(async () => {
  tree = await buildRuntimeTree();
  stack = await ProductionStack.start('runtime');
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-runtime-data-'));
}, 600_000);

afterAll(async () => {
  await stack?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  await tree?.remove();
});

describe('the runtime tree, built as the Dockerfile builds it', () => {
  it('when its packages are listed, then none is a development tool or what only the tools bring, and none is a package manager', async () => {
    const development = await developmentPackages();
    // The check itself: it knows the compiler, tsx, vitest and what they bring.
    for (const tool of ['typescript', 'tsx', 'vitest', '@types/koa']) expect(development.tools).toContain(tool);
    for (const brought of ['esbuild', 'vite']) expect(development.broughtByTools).toContain(brought);
    const installed = await installedPackages(tree.dir);
    expect(installed).toContain('koa');
    expect([...installed].filter((name) => development.tools.has(name) || development.broughtByTools.has(name))).toEqual([]);
    for (const manager of ['pnpm', 'npm', 'yarn', 'corepack']) expect(installed).not.toContain(manager);
  });

  it("when its files are listed, then it holds the entry points and what `pnpm build` made of each package's src: no TypeScript source, test or fixture", async () => {
    expect((await readdir(tree.dir)).filter((name) => name !== 'node_modules').sort()).toEqual([
      'api.js',
      'cli.js',
      'ensure-build.js',
      'healthcheck.js',
      'package.json',
      'pnpm-lock.yaml',
      'pnpm-workspace.yaml',
      'worker.js',
    ]);
    const store = path.join(tree.dir, 'node_modules', '.pnpm');
    const workspacePackages = (await readdir(store)).filter((entry) => entry.startsWith('@logi+'));
    const names = workspacePackages.map((entry) => entry.replace(/^@logi\+/, '').replace(/@file.*$/, ''));
    expect([...names].sort()).toEqual(['adapters', 'api', 'config', 'domain', 'worker']);
    for (const [i, name] of names.entries()) {
      const dir = path.join(store, workspacePackages[i]!, 'node_modules', '@logi', name);
      expect((await readdir(dir)).filter((file) => file !== 'node_modules').sort()).toEqual(['dist', 'package.json']);
      const files = await filesUnder(path.join(dir, 'dist'));
      expect(files).toContain('index.js');
      // Each file is the JavaScript or declarations of a source file, or an asset beside one (the invoice templates); the API's also the guides it serves.
      const sources = new Set(await filesUnder(path.join(ROOT, 'packages', name, 'src')));
      if (name === 'api') for (const guide of await readdir(path.join(ROOT, 'docs/integrate'))) sources.add(`guides/${guide}`);
      expect(files.filter((file) => !sources.has(file.replace(/\.(d\.ts|js)$/, '.ts')) || /\.test\.ts$/.test(file.replace(/\.(d\.ts|js)$/, '.ts')))).toEqual(
        [],
      );
      if (name === 'adapters') expect(files).toEqual(expect.arrayContaining(['handlebars/invoice.hbs', 'handlebars/invoice-footer.hbs']));
      if (name === 'api') expect(files).toEqual(expect.arrayContaining(['guides/getting-started.md', 'guides/errors-and-retries.md']));
    }
  });

  it('when the image is read, then it runs as the node user, starts the API with plain node and checks its health with node', () => {
    expect(tree.user).toBe('node');
    expect(tree.cmd).toEqual(['node', 'api.js']);
    expect(tree.healthcheck).toEqual(['node', 'healthcheck.js']);
    expect(tree.env.NODE_ENV).toBe('production');
  });

  it("when compose runs the image, then its migrate, api and worker services run the tree's entry points with node", async () => {
    const compose = parseYaml(await readFile(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { command?: string[] }> };
    expect(compose.services.migrate?.command).toEqual(['node', 'cli.js', 'db:migrate']);
    expect(compose.services.api?.command).toEqual(['node', 'api.js']);
    expect(compose.services.worker?.command).toEqual(['node', 'worker.js']);
    expect(Object.values(compose.services).filter((service) => service.command?.[0] === 'pnpm')).toEqual([]);
  });
});

describe('the API, a worker and the CLI started from the tree with plain node', () => {
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let apiPort: number;
  let workerMetricsPort: number;

  beforeAll(async () => {
    // As compose runs them: migrate (and the demo data, the `docker compose run` of docs/operate/deployment-and-workers.md), then the API and a worker.
    const migrated = await runInTree(['node', 'cli.js', 'db:migrate']);
    expect(migrated, migrated.stderr).toMatchObject({ code: 0 });
    const loaded = await runInTree(['node', 'cli.js', 'fixtures:load', path.join(ROOT, 'fixtures/demo.json')]);
    expect(loaded, loaded.stderr).toMatchObject({ code: 0 });
    apiPort = await freePort();
    workerMetricsPort = await freePort();
    api = startInTree(tree.cmd, { PORT: String(apiPort), METRICS_PORT: '0' });
    worker = startInTree(['node', 'worker.js'], { METRICS_PORT: String(workerMetricsPort), METRICS_HOST: '127.0.0.1' });
    await Promise.all([api.ready(`http://127.0.0.1:${apiPort}/health/ready`), worker.ready(`http://127.0.0.1:${workerMetricsPort}/health/ready`)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  it('when a PDF is asked for, then the worker renders it and the API serves it', async () => {
    const response = await fetch(`http://127.0.0.1:${apiPort}/v1/invoices/100001/pdf?lang=de`, { headers: DEMO });
    expect(response.status).toBe(200);
    expect(
      Buffer.from(await response.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    await expect.poll(() => worker.logs.some((line) => line.msg === 'job completed' && line.job === 'render-invoice-pdf'), { timeout: 10_000 }).toBe(true);
  });

  it('when a file is uploaded, then the worker stores it in S3 and the API answers 201', async () => {
    const before = new Set(await stack.objectKeys());
    // Bytes of their own, so the demo order cannot have them already (a duplicate is not stored again).
    const bytes = Buffer.concat([await readFile(path.join(ROOT, 'fixtures/samples/cmr.pdf')), Buffer.from(`\n% ${randomUUID()}\n`)]);
    const form = new FormData();
    form.append('category_id', '1');
    form.append('files', new Blob([bytes], { type: 'application/pdf' }), 'cmr.pdf');
    const response = await fetch(`http://127.0.0.1:${apiPort}/v1/orders/3001/files`, { method: 'POST', body: form, headers: DEMO });
    const body = (await response.json()) as { data: { uploaded: Array<Record<string, unknown>> } };
    expect(response.status).toBe(201);
    expect(body.data.uploaded).toEqual([expect.objectContaining({ name: 'cmr.pdf' })]);
    expect(body.data.uploaded[0]).not.toHaveProperty('duplicate_of');
    await expect.poll(() => worker.logs.some((line) => line.msg === 'job completed' && line.job === 'store-order-file'), { timeout: 10_000 }).toBe(true);
    const added = (await stack.objectKeys()).filter((key) => !before.has(key));
    expect(added.filter((key) => !key.startsWith('pdf-cache/'))).toHaveLength(1);
  });

  it('when the guides are asked for, then the API serves them from the tree (the build copied docs/integrate), and the reference links there', async () => {
    const guide = await fetch(`http://127.0.0.1:${apiPort}/v1/guides/getting-started`);
    expect(guide.status).toBe(200);
    expect(await guide.text()).toContain('<title>Getting started · Logistics API guides</title>');
    const document = (await (await fetch(`http://127.0.0.1:${apiPort}/v1/openapi.json`)).json()) as { externalDocs: { url: string } };
    expect((await fetch(new URL(document.externalDocs.url, `http://127.0.0.1:${apiPort}/v1/openapi.json`))).status).toBe(200);
  });

  it("when the image's health check runs, then it passes for the API and for a worker container (its metrics listener), and fails with nothing listening", async () => {
    const check = async (env: Record<string, string>) => (await runInTree(tree.healthcheck, env)).code;
    const closed = String(await freePort());
    expect(await check({ PORT: String(apiPort), METRICS_PORT: closed })).toBe(0);
    expect(await check({ PORT: closed, METRICS_PORT: String(workerMetricsPort) })).toBe(0);
    expect(await check({ PORT: closed, METRICS_PORT: closed })).toBe(1);
  });

  it("when the processes are looked at, then each is plain node on the tree's entry point: no loader flag, no NODE_OPTIONS", async () => {
    for (const [child, entry] of [
      [api.child, 'api.js'],
      [worker.child, 'worker.js'],
    ] as const) {
      expect((await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).split('\0').filter(Boolean)).toEqual([process.execPath, entry]);
      expect((await readFile(`/proc/${child.pid}/environ`, 'utf8')).split('\0').filter((line) => line.startsWith('NODE_OPTIONS='))).toEqual([]);
    }
  });

  it('when they get SIGTERM, then both stop cleanly (exit code 0)', async () => {
    expect(await Promise.all([api.stop(), worker.stop()])).toEqual([0, 0]);
  });
});
