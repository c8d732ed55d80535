import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import type { Container } from 'inversify';
import { createLogger, loadFixtures, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { loadConfig, type AppConfig } from '@logi/config';
import { buildContainer, startServer, Tokens } from '@logi/api';
import { readdir } from 'node:fs/promises';
import { DIRS, KEYS, testFixture } from './test-fixture.js';
import { ProductionStack } from './production-stack.js';
import { withTestSecretKey } from './test-secret-key.js';

/** `production` runs the same API tests on MariaDB, Redis, an S3 server and a worker process. */
export const PROFILE: 'embedded' | 'production' = process.env.API_TEST_PROFILE === 'production' ? 'production' : 'embedded';

export type Tenant = keyof typeof KEYS;

export interface TestApi {
  /** Base address including /v1. */
  base: string;
  /** Server root, for paths outside /v1. */
  root: string;
  config: AppConfig;
  container: Container;
  knex: Knex;
  dataDir: string;
  /** The production stack (worker, S3 server) when PROFILE is production. */
  stack: ProductionStack | null;
  /** The listener's kept-alive connection timeouts, as the running server has them. */
  keepAlive: { timeoutMs: number; headersTimeoutMs: number };
  /** Keys of the objects in file storage (local directory or S3 bucket). */
  objectKeys(): Promise<string[]>;
  /** fetch with the tenant's credentials (none when `as: null`). */
  call(pathAndQuery: string, init?: RequestInit & { as?: Tenant | null }): Promise<Response>;
  stop(): Promise<void>;
}

export function authHeaders(tenant: Tenant): Record<string, string> {
  return { Authorization: `Bearer ${KEYS[tenant]}`, 'X-Client-Directory': DIRS[tenant] };
}

/**
 * Starts the real API in this process on a free port, with the test fixture
 * loaded. Embedded profile unless `env` says otherwise.
 */
export interface TestApiOptions {
  /** The clock the API reads (periods). */
  now?: Date;
  /** Part of the test database and Redis prefix names. */
  label?: string;
  /** Overrides API_TEST_PROFILE for this server. */
  profile?: 'embedded' | 'production';
  /** Production profile: start a worker process (default true). */
  worker?: boolean;
  /** Runs after the data is loaded and before the server starts (to plant leftovers or rebind a port, say), with the API's database, stack and container. */
  beforeStart?: (dataDir: string, context: { knex: Knex; stack: ProductionStack | null; container: Container }) => Promise<void>;
  /** Collects the API's log lines (parsed JSON) instead of silencing them. */
  logLines?: Array<Record<string, unknown>>;
}

export async function startTestApi(env: Record<string, string> = {}, options: TestApiOptions = {}): Promise<TestApi> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'logi-api-'));
  let stack: ProductionStack | null = null;
  try {
    stack = (options.profile ?? PROFILE) === 'production' ? await ProductionStack.start(options.label ?? 'api') : null;
    return await startApi(dataDir, stack, env, options);
  } catch (error) {
    // A configuration error, a port in use, a failing beforeStart: nothing of this server may stay behind.
    await stack?.stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

async function startApi(dataDir: string, stack: ProductionStack | null, env: Record<string, string>, options: TestApiOptions): Promise<TestApi> {
  const fullEnv = withTestSecretKey({
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000',
    METRICS_PORT: '0',
    DASHBOARD_PORT: '0',
    ...stack?.env,
    ...env,
  });
  const config = loadConfig(fullEnv);
  const logger = options.logLines
    ? createLogger({ level: 'info' }, { write: (line: string) => void options.logLines!.push(JSON.parse(line) as Record<string, unknown>) })
    : createLogger({ level: 'silent' });
  const container = buildContainer(config, logger);
  if (options.now) {
    const now = options.now;
    container.unbind(Tokens.Clock);
    container.bind(Tokens.Clock).toConstantValue({ now: () => now });
  }
  const knex = container.get<Knex>(Tokens.Knex);
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    await migrateLatest(knex);
    await loadFixtures(knex, testFixture, { hasher: new Sha256ApiKeyHasher() });
    if (options.worker !== false) await stack?.startWorker(dataDir, env);
    await options.beforeStart?.(dataDir, { knex, stack, container });
    server = await startServer(container);
  } catch (error) {
    await knex.destroy().catch(() => undefined);
    throw error;
  }
  const base = `${server.url}/v1`;
  return {
    base,
    root: server.url,
    config,
    container,
    knex,
    dataDir,
    stack,
    keepAlive: server.keepAlive,
    async objectKeys() {
      if (stack) return stack.objectKeys();
      const root = path.join(dataDir, 'files');
      const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
      return entries
        .filter((e) => e.isFile())
        .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
        .sort();
    },
    call(pathAndQuery, init = {}) {
      const { as = 'baltic', headers, ...rest } = init;
      return fetch(`${base}${pathAndQuery}`, { ...rest, headers: { ...(as ? authHeaders(as) : {}), ...(headers as Record<string, string>) } });
    },
    async stop() {
      await server.stop();
      await stack?.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The JSON envelope of a response, checked for its shape. */
export async function envelopeOf(response: Response): Promise<{ status: number; message: string; data: any; errors?: Record<string, string[]> }> {
  const body = (await response.json()) as { status: number; message: string; data: unknown; errors?: Record<string, string[]> };
  const keys = Object.keys(body).sort();
  if (!(keys.join() === 'data,message,status' || keys.join() === 'data,errors,message,status')) {
    throw new Error(`not an envelope: ${JSON.stringify(body)}`);
  }
  if (body.status !== response.status) throw new Error(`envelope status ${body.status} != HTTP ${response.status}`);
  return body;
}
