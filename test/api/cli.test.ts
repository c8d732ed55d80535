import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex, Sha256ApiKeyHasher } from '@logi/adapters';
import { openTestDatabase, snapshot, type TestDatabase } from '../adapters/knex-test-databases.js';
import { repositoryFixture } from '../adapters/knex-repository.fixture.js';
import { cli } from '../support/cli-runner.js';

const hasher = new Sha256ApiKeyHasher();

// Each test starts `pnpm cli` one to three times, each a few seconds of start-up on 2 cores (more
// on a loaded machine): a bound on the run, not on the speed.
const SPAWNING = { timeout: 120_000 };

describe('pnpm cli (embedded SQLite in DATA_DIR)', SPAWNING, () => {
  let dataDir: string;
  let env: Record<string, string>;
  let knex: Knex | null = null;
  const db = () => (knex ??= createKnex({ databaseUrl: null, dataDir }));

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-cli-'));
    env = { DATA_DIR: dataDir };
  });

  afterAll(async () => {
    await knex?.destroy();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('when db:migrate runs twice, then the schema is created once and then reported up to date', async () => {
    const first = await cli(['db:migrate'], env);
    expect(first).toMatchObject({
      code: 0,
      stdout:
        'Schema updated: 001-initial-schema, 002-sqlite-folded-indexes, 003-derived-search-data, 004-covering-sort-indexes, 005-idempotency-keys, 006-e-invoice-fields, 007-client-data-version, 008-change-events, 009-webhooks, 010-event-retention-index, 011-vat-sort-index, 012-customer-name-counts, 013-directory-lock-first, 014-upload-quota-usage, 015-webhook-fair-claims, 016-exports, 017-api-keys, 018-webhook-secrets-at-rest, 019-national-e-invoice-fields, 020-export-fair-claims, 021-webhook-next-due, 022-feed-restores, 023-event-capture-time\n',
    });
    expect(await cli(['db:migrate'], env)).toMatchObject({ code: 0, stdout: 'Schema is up to date.\n' });
    expect(await db().schema.hasTable('invoices')).toBe(true);
  });

  it('when a fixture file is loaded twice, then counts are printed and the second load changes nothing', async () => {
    const file = path.join(dataDir, 'fixture.json');
    await writeFile(file, JSON.stringify(repositoryFixture));
    const first = await cli(['fixtures:load', file], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`Loaded ${file}: 3 clients, 2 file categories, 7 orders, 28 invoices (29 invoice orders, 30 items).\n`);
    const before = await snapshot(db());
    expect(before.invoices).toHaveLength(28);
    expect((await cli(['fixtures:load', file], env)).code).toBe(0);
    expect(await snapshot(db())).toEqual(before);
  });

  it('when rows were written straight into the tables, then search:reindex indexes them with progress and empties the pending list', async () => {
    const template = (await db()('invoices').first()) as Record<string, unknown>;
    await db()('invoices').insert({ ...template, id: 70_001, nr: 'ERP/DIRECT/70001' });
    expect(await db()('search_pending').where({ entity_id: 70_001 }).count({ n: '*' })).toEqual([{ n: 2 }]);
    const run = await cli(['search:reindex'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Reindexed 29 invoices and 7 orders \(\d+ index entries\) and rebuilt the counts in \d+\.\d s\.\n$/);
    // Not a terminal: the progress bar prints a line per tenth of each stage, ending at 100%.
    const progress = run.stderr.split('\n').filter((line) => line.startsWith('['));
    expect(progress.filter((line) => / 100% invoices 29\/29$/.test(line))).toHaveLength(1);
    expect(progress.filter((line) => / 100% orders 7\/7$/.test(line))).toHaveLength(1);
    expect(await db()('search_pending').count({ n: '*' })).toEqual([{ n: 0 }]);
    const postings = (await db()('search_trigrams').count({ n: '*' }).first()) as { n: number };
    expect(postings.n).toBeGreaterThan(29);
    await db()('invoices').where({ id: 70_001 }).delete();
  });

  it('when pdf-cache:clear runs, then every cached PDF is removed and nothing else in storage', async () => {
    const files = path.join(dataDir, 'files');
    await mkdir(path.join(files, 'pdf-cache'), { recursive: true });
    await mkdir(path.join(files, 'orders', 'd', '1'), { recursive: true });
    for (const digit of ['a', 'b']) await writeFile(path.join(files, 'pdf-cache', `${digit.repeat(64)}.pdf`), '%PDF');
    await writeFile(path.join(files, 'orders', 'd', '1', 'kept'), 'x');
    const run = await cli(['pdf-cache:clear'], env);
    expect(run).toMatchObject({ code: 0, stdout: 'Removed 2 cached PDFs.\n' });
    expect(await readdir(path.join(files, 'pdf-cache'))).toEqual([]);
    expect(await readdir(path.join(files, 'orders', 'd', '1'))).toEqual(['kept']);
    expect(await cli(['pdf-cache:clear'], env)).toMatchObject({ code: 0, stdout: 'Removed 0 cached PDFs.\n' });
  });

  it('when the fixture file is invalid, then one line names the bad path, exit 1, nothing written', async () => {
    const bad = structuredClone(repositoryFixture);
    (bad.invoices[3] as { type: string }).type = 'x';
    bad.invoices[0]!.nr = 'SHOULD-NOT-APPEAR';
    const file = path.join(dataDir, 'bad.json');
    await writeFile(file, JSON.stringify(bad));
    const run = await cli(['fixtures:load', file], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Invalid fixture file at invoices[3].type:');
    expect(await db()('invoices').where({ nr: 'SHOULD-NOT-APPEAR' }).count({ n: '*' })).toEqual([{ n: 0 }]);
    const missing = await cli(['fixtures:load', path.join(dataDir, 'none.json')], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('none.json: ENOENT');
  });

  it('when a client is created, then its key (every scope) is printed once, stored only as a hash, and a second create fails', async () => {
    const run = await cli(['clients:create', '--directory', 'acme-cli', '--name', 'ACME Spółka'], env);
    expect(run.code).toBe(0);
    const key = run.stdout.trim();
    expect(key).toMatch(/^lgk_[A-Za-z0-9_-]{43}$/);
    const row = await db()('clients').where({ directory: 'acme-cli' }).first();
    expect(row.name).toBe('ACME Spółka');
    expect(await db()('api_keys').where({ directory: 'acme-cli' }).select('name', 'key_hash', 'scopes', 'expires_at', 'revoked_at')).toEqual([
      { name: 'default', key_hash: hasher.hash(key), scopes: 'read,write,webhooks', expires_at: null, revoked_at: null },
    ]);
    expect(JSON.stringify(row)).not.toContain(key);

    const again = await cli(['clients:create', '--directory', 'acme-cli'], env);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('Client directory "acme-cli" already exists');
  });

  it('when clients are listed, then every directory and name is shown', async () => {
    const run = await cli(['clients:list'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^DIRECTORY +NAME\n/);
    expect(run.stdout).toMatch(/\nacme-cli +ACME Spółka\n/);
    expect(run.stdout).toMatch(/\nnorth-freight +North Freight Sp\. z o\.o\.\n/);
  });

  it('when a key is rotated, then one new key with every scope replaces all the old ones; an unknown directory fails', async () => {
    const before = (await db()('api_keys').where({ directory: 'acme-cli' }).whereNull('revoked_at').select('id')).map((row) => row.id as number);
    expect(before).toHaveLength(1);
    const run = await cli(['clients:rotate-key', '--directory', 'acme-cli'], env);
    expect(run.code).toBe(0);
    const key = run.stdout.trim();
    const active = await db()('api_keys').where({ directory: 'acme-cli' }).whereNull('revoked_at').select('id', 'key_hash', 'scopes');
    expect(active).toEqual([{ id: expect.any(Number), key_hash: hasher.hash(key), scopes: 'read,write,webhooks' }]);
    expect(before).not.toContain(active[0].id);
    const unknown = await cli(['clients:rotate-key', '--directory', 'nobody'], env);
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toContain('Client directory "nobody" does not exist.');
  });

  // Each one a process start of its own and nothing shared: run at once.
  it.concurrent.for([
    [['no:such-command'], 'Unknown command "no:such-command".'],
    [['clients:create'], '--directory <id> is required.'],
    [['clients:create', '--directory', 'bad dir'], '--directory must be'],
    [['clients:create', '--directory', 'x', '--colour', 'red'], "Unknown option '--colour'"],
    [['fixtures:load'], 'fixtures:load needs 1 argument.'],
    [[], 'Usage: pnpm cli <command>'],
  ] as Array<[string[], string]>)('when the command line is %j, then exit 2 with the usage', { timeout: 120_000 }, async ([args, message], { expect }) => {
    const run = await cli(args, env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain('Usage: pnpm cli <command> [options]');
  });

  it('when the configuration is wrong, then its one line is printed and exit 1', async () => {
    const run = await cli(['db:migrate'], { ...env, PORT: 'abc' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Configuration error: PORT must be a port number from 0 to 65535 (got "abc")\n');
    expect(run.stderr).not.toMatch(/\n[ \t]+at /);
  });
});

describe('pnpm cli with DATABASE_URL (MariaDB)', SPAWNING, () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase('mariadb', 'cli');
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('when the demo fixture is loaded twice, then both directories and their demo keys work and nothing changes', async () => {
    const env = { DATABASE_URL: db.databaseUrl!, DATA_DIR: db.dataDir };
    const first = await cli(['fixtures:load', 'fixtures/demo.json'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^Loaded fixtures\/demo\.json: 2 clients, 5 file categories, 80 orders, \d{3} invoices/);
    const before = await snapshot(db.knex);
    expect((await cli(['fixtures:load', 'fixtures/demo.json'], env)).code).toBe(0);
    expect(await snapshot(db.knex)).toEqual(before);
    const keys = await db.knex('api_keys').select('directory', 'key_hash', 'scopes', 'revoked_at').orderBy('directory');
    expect(keys).toEqual([
      { directory: 'alpine-logistics', key_hash: hasher.hash('demo-key-alpine'), scopes: 'read,write,webhooks', revoked_at: null },
      { directory: 'baltic-haulage', key_hash: hasher.hash('demo-key-baltic'), scopes: 'read,write,webhooks', revoked_at: null },
    ]);
  });
});
