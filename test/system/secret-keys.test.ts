import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmSecretCipher, loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { openTestDatabase, type TestDatabase } from '../adapters/knex-test-databases.js';
import { testFixture, DIRS } from '../support/test-fixture.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const API = path.join(ROOT, 'packages/api/src/main.ts');
const WORKER = path.join(ROOT, 'packages/worker/src/main.ts');
const GONE = { id: 'retired-2025', key: Buffer.alloc(32, 9) };
const GONE_ENV = `${GONE.id}:${GONE.key.toString('base64')}`;

function start(main: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', main], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', METRICS_PORT: '0', PORT: '0', DATABASE_URL: '', REDIS_URL: '', SECRETS_ENCRYPTION_KEYS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** How the process ended, with what it printed to stderr; or 'listening' once the API says so (then it is stopped). */
function outcome(child: ChildProcess): Promise<{ code: number | null; stderr: string } | 'listening'> {
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"API listening"')) {
        child.kill('SIGTERM');
        resolve('listening');
      }
    });
    child.once('exit', (code) => resolve({ code, stderr }));
  });
}

/** A database whose one webhook endpoint has its secret encrypted with a key that is no longer configured. */
async function databaseWithRetiredKey(profile: 'sqlite' | 'mariadb'): Promise<TestDatabase> {
  const db = await openTestDatabase(profile, 'secret_keys');
  await loadFixtures(db.knex, testFixture, { hasher: new Sha256ApiKeyHasher() });
  await db.knex('webhook_endpoints').insert({
    directory: DIRS.baltic,
    url: 'https://hooks.example.com/x',
    event_types: '[]',
    enabled: 1,
    secret: new AesGcmSecretCipher([GONE]).seal('whsec_c2VjcmV0c2VjcmV0'),
    created: 1,
  });
  return db;
}

function expectOneLineNamingTheKey(result: { code: number | null; stderr: string } | 'listening'): void {
  expect(result).not.toBe('listening');
  const { code, stderr } = result as { code: number | null; stderr: string };
  expect(code).toBe(1);
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^Configuration error: SECRETS_ENCRYPTION_KEYS lacks the key "retired-2025"/);
}

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

  it('when the API starts on MariaDB with no key or another key, then it stops with one line; given the key, it starts', async () => {
    const env = { DATA_DIR: production.dataDir, DATABASE_URL: production.databaseUrl! };
    const other = `new-2026:${Buffer.alloc(32, 1).toString('base64')}`;
    const [none, wrong, right] = await Promise.all([
      outcome(start(API, env)),
      outcome(start(API, { ...env, SECRETS_ENCRYPTION_KEYS: other })),
      outcome(start(API, { ...env, SECRETS_ENCRYPTION_KEYS: `${other},${GONE_ENV}` })),
    ]);
    expectOneLineNamingTheKey(none);
    expect((none as { stderr: string }).stderr).toContain('no key is configured');
    expectOneLineNamingTheKey(wrong);
    expect(right).toBe('listening');
  });

  it('when a worker starts without the key, then it stops with one line naming SECRETS_ENCRYPTION_KEYS before taking any job', async () => {
    const env = { DATA_DIR: production.dataDir, DATABASE_URL: production.databaseUrl!, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: 'logi-secret-keys' };
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
