import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import readline from 'node:readline';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmSecretCipher, loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { loadConfig } from '@logi/config';
import { openTestDatabase, type TestDatabase } from '../adapters/knex-test-databases.js';
import { cli } from '../support/cli-runner.js';
import { testFixture, DIRS } from '../support/test-fixture.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const API = path.join(ROOT, 'packages/api/src/main.ts');
const WORKER = path.join(ROOT, 'packages/worker/src/main.ts');
const GONE = { id: 'retired-2025', key: Buffer.alloc(32, 9) };
const GONE_ENV = `${GONE.id}:${GONE.key.toString('base64')}`;
/** The right id with other bytes: a key mistyped, or taken from another environment. */
const IMPOSTOR_ENV = `${GONE.id}:${Buffer.alloc(32, 8).toString('base64')}`;
const REDIS = { REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: 'logi-secret-keys' };

/** Processes started here: any still running when the file ends (a start that should have failed) is killed. */
const started = new Set<ChildProcess>();

function start(main: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', METRICS_PORT: '0', PORT: '0', DATABASE_URL: '', REDIS_URL: '', SECRETS_ENCRYPTION_KEYS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

afterAll(() => {
  for (const child of started) child.kill('SIGKILL');
});

/** How the process ended, with what it printed to stderr; or 'listening' once the API (or the worker) says it serves (then it is stopped). */
function outcome(child: ChildProcess): Promise<{ code: number | null; stderr: string } | 'listening'> {
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"API listening"') || line.includes('"worker started"')) {
        child.kill('SIGTERM');
        resolve('listening');
      }
    });
    child.once('exit', (code) => resolve({ code, stderr }));
  });
}

async function migrateAndLoad(db: TestDatabase): Promise<void> {
  await loadFixtures(db.knex, testFixture, { hasher: new Sha256ApiKeyHasher() });
}

/** A webhook endpoint row of the fixture's directory holding `secret` as stored. */
function endpointRow(secret: string): Record<string, unknown> {
  return { directory: DIRS.baltic, url: 'https://hooks.example.com/x', event_types: '[]', enabled: 1, secret, created: 1 };
}

/** A database whose one webhook endpoint has its secret encrypted with a key that is no longer configured. */
async function databaseWithRetiredKey(profile: 'sqlite' | 'mariadb'): Promise<TestDatabase> {
  const db = await openTestDatabase(profile, 'secret_keys');
  await migrateAndLoad(db);
  await db.knex('webhook_endpoints').insert(endpointRow(new AesGcmSecretCipher([GONE]).seal('whsec_c2VjcmV0c2VjcmV0')));
  return db;
}

/** The one line the process printed before it exited 1. */
function oneLine(result: { code: number | null; stderr: string } | 'listening'): string {
  expect(result).not.toBe('listening');
  const { code, stderr } = result as { code: number | null; stderr: string };
  expect(code).toBe(1);
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  return lines[0]!;
}

function expectOneLineNamingTheKey(result: { code: number | null; stderr: string } | 'listening'): void {
  expect(oneLine(result)).toMatch(/^Configuration error: SECRETS_ENCRYPTION_KEYS lacks the key "retired-2025"/);
}

const NO_KEY_LINE = /^Configuration error: SECRETS_ENCRYPTION_KEYS must be set when DATABASE_URL is set .*`pnpm cli secrets:generate-key`/;

describe('a process whose webhook secrets are encrypted with a key it lacks', { timeout: 120_000 }, () => {
  let embedded: TestDatabase;
  let production: TestDatabase;
  beforeAll(async () => {
    [embedded, production] = await Promise.all([databaseWithRetiredKey('sqlite'), databaseWithRetiredKey('mariadb')]);
  });
  afterAll(async () => {
    await Promise.all([embedded?.drop(), production?.drop()]);
  });

  it('when the embedded API starts with only its own key in DATA_DIR, then it stops with one line naming SECRETS_ENCRYPTION_KEYS and the key id', async () => {
    expectOneLineNamingTheKey(await outcome(start(API, { DATA_DIR: embedded.dataDir })));
  });

  it('when the API or a worker starts on MariaDB without SECRETS_ENCRYPTION_KEYS, then it stops with one line naming it and the command that makes a key', async () => {
    const env = { DATA_DIR: production.dataDir, DATABASE_URL: production.databaseUrl! };
    const [api, worker] = await Promise.all([outcome(start(API, env)), outcome(start(WORKER, { ...env, ...REDIS }))]);
    expect(oneLine(api)).toMatch(NO_KEY_LINE);
    expect(oneLine(worker)).toMatch(NO_KEY_LINE);
  });

  it('when the API starts on MariaDB with another key, then it stops with one line; given the key too, it starts', async () => {
    const env = { DATA_DIR: production.dataDir, DATABASE_URL: production.databaseUrl! };
    const other = `new-2026:${Buffer.alloc(32, 1).toString('base64')}`;
    const [wrong, right] = await Promise.all([
      outcome(start(API, { ...env, SECRETS_ENCRYPTION_KEYS: other })),
      outcome(start(API, { ...env, SECRETS_ENCRYPTION_KEYS: `${other},${GONE_ENV}` })),
    ]);
    expectOneLineNamingTheKey(wrong);
    expect(right).toBe('listening');
  });

  it('when a configured key has the right id and the wrong bytes, then the API and a worker stop with one line naming SECRETS_ENCRYPTION_KEYS and the id, never the key', async () => {
    const env = { DATA_DIR: production.dataDir, DATABASE_URL: production.databaseUrl!, SECRETS_ENCRYPTION_KEYS: IMPOSTOR_ENV };
    const [api, worker] = await Promise.all([outcome(start(API, env)), outcome(start(WORKER, { ...env, ...REDIS }))]);
    for (const line of [oneLine(api), oneLine(worker)]) {
      expect(line).toMatch(
        /^Configuration error: SECRETS_ENCRYPTION_KEYS has a key "retired-2025" that does not open the webhook secrets sealed under that id/,
      );
      expect(line).not.toContain(IMPOSTOR_ENV.split(':')[1]);
    }
  });

  it('when the embedded key in DATA_DIR has the id the secrets name and other bytes, then the API stops with one line naming the id', async () => {
    const db = await openTestDatabase('sqlite', 'secret_keys_local');
    try {
      await migrateAndLoad(db);
      const local = { id: 'local-0a0b0c0d', key: Buffer.alloc(32, 3) };
      await db.knex('webhook_endpoints').insert(endpointRow(new AesGcmSecretCipher([local]).seal('whsec_c2VjcmV0c2VjcmV0')));
      await writeFile(path.join(db.dataDir, 'secrets.key'), `${local.id}:${Buffer.alloc(32, 4).toString('base64')}\n`, { mode: 0o600 });
      expect(oneLine(await outcome(start(API, { DATA_DIR: db.dataDir })))).toMatch(
        /^Configuration error: SECRETS_ENCRYPTION_KEYS has a key "local-0a0b0c0d" that does not open .*DATA_DIR\/secrets\.key/,
      );
    } finally {
      await db.drop();
    }
  });

  it('when a database from before encryption holds plain secrets, then the start seals them with the first key, and they open to the same secret', async () => {
    const plain = 'whsec_cGxhaW5wbGFpbnBsYWlucGxhaW4=';
    const [id] = await production.knex('webhook_endpoints').insert({ ...endpointRow(plain), previous_secret: `${plain}0`, previous_secret_until: 1 });
    const current = { id: 'current-2026', key: Buffer.alloc(32, 6) };
    const env = {
      DATA_DIR: production.dataDir,
      DATABASE_URL: production.databaseUrl!,
      SECRETS_ENCRYPTION_KEYS: `${current.id}:${current.key.toString('base64')},${GONE_ENV}`,
    };
    try {
      expect(await outcome(start(API, env))).toBe('listening');
      const row = (await production.knex('webhook_endpoints').where({ id }).first()) as { secret: string; previous_secret: string };
      const cipher = new AesGcmSecretCipher([current]);
      expect([row.secret, row.previous_secret].map((value) => cipher.keyIdOf(value))).toEqual([current.id, current.id]);
      expect([cipher.open(row.secret), cipher.open(row.previous_secret)]).toEqual([plain, `${plain}0`]);
      // The endpoint sealed with the older key is left as it is (webhooks:reencrypt moves it).
      const others = (await production.knex('webhook_endpoints').whereNot({ id }).pluck('secret')) as string[];
      expect(others.map((value) => cipher.keyIdOf(value))).toEqual([GONE.id]);
    } finally {
      await production.knex('webhook_endpoints').where({ id }).delete();
    }
  });

  it('when a worker starts with another key, then it stops with one line naming SECRETS_ENCRYPTION_KEYS before taking any job', async () => {
    const env = {
      DATA_DIR: production.dataDir,
      DATABASE_URL: production.databaseUrl!,
      SECRETS_ENCRYPTION_KEYS: `new-2026:${Buffer.alloc(32, 1).toString('base64')}`,
      ...REDIS,
    };
    expectOneLineNamingTheKey(await outcome(start(WORKER, env)));
  });

  it('when SECRETS_ENCRYPTION_KEYS holds a key of the wrong length, then the API stops with one line naming it, without the key', async () => {
    const short = Buffer.alloc(16, 5).toString('base64');
    const result = await outcome(start(API, { DATA_DIR: embedded.dataDir, SECRETS_ENCRYPTION_KEYS: `k1:${short}` }));
    expect(result).toMatchObject({ code: 1 });
    const lines = (result as { stderr: string }).stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Configuration error: SECRETS_ENCRYPTION_KEYS entry 1 of 1 has a key of 16 bytes/);
    expect(lines[0]).not.toContain(short);
  });
});

describe('the CLI and SECRETS_ENCRYPTION_KEYS', { timeout: 120_000 }, () => {
  it('when secrets:generate-key runs, then it prints one new <id>:<base64 of 32 bytes> entry that the configuration accepts, without reading the configuration or a database', async () => {
    // A DATABASE_URL that answers nowhere and a bad variable: neither is read.
    const env = { DATABASE_URL: 'mysql://nobody@127.0.0.1:9/none', PORT: 'abc' };
    const [first, second] = await Promise.all([cli(['secrets:generate-key'], env), cli(['secrets:generate-key'], env)]);
    for (const run of [first, second]) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^k\d{8}-[0-9a-f]{4}:[A-Za-z0-9+/]{43}=\n$/);
    }
    const entries = [first.stdout.trim(), second.stdout.trim()];
    expect(entries[0]).not.toBe(entries[1]);
    const keys = loadConfig({ SECRETS_ENCRYPTION_KEYS: entries.join(',') }).secretKeys;
    expect(keys.map((key) => [key.id, key.key.length])).toEqual(entries.map((entry) => [entry.split(':')[0], 32]));
  });

  it('when webhooks:reencrypt runs on MariaDB without SECRETS_ENCRYPTION_KEYS, then it stops with the one line the API gives; a command that touches no secret runs', async () => {
    const db = await openTestDatabase('mariadb', 'secret_keys_cli');
    try {
      await migrateAndLoad(db);
      const env = { DATABASE_URL: db.databaseUrl!, DATA_DIR: db.dataDir, SECRETS_ENCRYPTION_KEYS: '' };
      const [reencrypt, list] = await Promise.all([cli(['webhooks:reencrypt'], env), cli(['clients:list'], env)]);
      expect(oneLine(reencrypt)).toMatch(NO_KEY_LINE);
      expect(list.code, list.stderr).toBe(0);
    } finally {
      await db.drop();
    }
  });
});
