import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex, loadFixtures, migrateLatest, Sha256ApiKeyHasher } from '@logi/adapters';
import { NORTH, repositoryFixture, SOUTH } from '../adapters/knex-repository.fixture.js';
import { openTestDatabase, type TestDatabase } from '../adapters/knex-test-databases.js';
import { cli } from '../support/cli-runner.js';

const hasher = new Sha256ApiKeyHasher();
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

/** A `keys:list` line: `id: 3  name: "…"  scopes: read  created: …  expires: …  last used: …  revoked: …`. */
function parseKeyLine(line: string): Record<string, string> {
  return Object.fromEntries(
    line.split(/ {2}(?=[a-z]+(?: [a-z]+)?: )/).map((field) => [field.slice(0, field.indexOf(': ')), field.slice(field.indexOf(': ') + 2)]),
  );
}

/** Every row of api_keys, to show a refused command changed nothing. */
const allKeys = (knex: Knex) => knex('api_keys').select('*').orderBy('id');

/** Command lines that must be refused, the exit code, and what stderr says (naming the argument). */
const BAD_ARGUMENTS: Array<[string[], number, string]> = [
  [['keys:create'], 2, '--directory <id> is required.'],
  [['keys:create', '--directory', 'bad dir'], 2, '--directory must be'],
  [['keys:create', '--directory', 'no-such-client'], 1, '--directory: client directory "no-such-client" does not exist'],
  [['keys:create', '--directory', NORTH, '--scopes', 'read,admin'], 2, '--scopes must be a comma-separated list of read, write, webhooks (got "read,admin")'],
  [['keys:create', '--directory', NORTH, '--scopes', ''], 2, '--scopes must be'],
  [['keys:create', '--directory', NORTH, '--scopes', 'read,'], 2, '--scopes must be'],
  [['keys:create', '--directory', NORTH, '--expires-in-days', '0'], 2, '--expires-in-days must be a whole number from 1 to 3650 (got "0")'],
  [['keys:create', '--directory', NORTH, '--expires-in-days', '3651'], 2, '--expires-in-days must be'],
  [['keys:create', '--directory', NORTH, '--expires-in-days', '1.5'], 2, '--expires-in-days must be'],
  [['keys:create', '--directory', NORTH, '--name', 'x'.repeat(101)], 2, '--name must be at most 100 characters'],
  [['keys:create', '--directory', NORTH, '--colour', 'red'], 2, "Unknown option '--colour'"],
  [['keys:list'], 2, '--directory <id> is required.'],
  [['keys:list', '--directory', 'no-such-client'], 1, '--directory: client directory "no-such-client" does not exist'],
  [['keys:revoke', '--directory', NORTH], 2, '--key-id <id> is required'],
  [['keys:revoke', '--directory', NORTH, '--key-id', 'abc'], 2, '--key-id <id> is required: a key id from keys:list (got "abc")'],
  [['keys:revoke', '--directory', NORTH, '--key-id', '999999'], 1, `--key-id: directory "${NORTH}" has no key 999999`],
];

describe.each(['sqlite', 'mariadb'] as const)('pnpm cli keys:* (%s)', { timeout: 180_000 }, (profile) => {
  let knex: Knex;
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    if (profile === 'sqlite') {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-cli-keys-'));
      knex = createKnex({ databaseUrl: null, dataDir });
      env = { DATA_DIR: dataDir };
      await migrateLatest(knex);
      cleanup = async () => {
        await knex.destroy();
        await rm(dataDir, { recursive: true, force: true });
      };
    } else {
      const db: TestDatabase = await openTestDatabase('mariadb', 'cli-keys');
      knex = db.knex;
      env = { DATABASE_URL: db.databaseUrl!, DATA_DIR: db.dataDir };
      cleanup = () => db.drop();
    }
    await loadFixtures(knex, repositoryFixture, { hasher });
  });

  afterAll(async () => {
    await cleanup?.();
  });

  it('when a key is created with the defaults, then the key alone is on the first line and its id on the second; it holds every scope and never expires', async () => {
    const started = Math.floor(Date.now() / 1000);
    const run = await cli(['keys:create', '--directory', NORTH], env);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines).toHaveLength(3);
    const [key, idLine] = lines;
    expect(key).toMatch(/^lgk_[A-Za-z0-9_-]{43}$/);
    const id = Number(/^id: (\d+)$/.exec(idLine!)![1]);
    const row = await knex('api_keys').where({ id }).first();
    expect(row).toMatchObject({ directory: NORTH, name: '', key_hash: hasher.hash(key!), scopes: 'read,write,webhooks', expires_at: null, revoked_at: null });
    expect(Number(row.created_at)).toBeGreaterThanOrEqual(started);
    expect(JSON.stringify(await allKeys(knex))).not.toContain(key);
    expect(run.stderr).toContain('shown once');
  });

  it('when a key is created with a name, scopes and an expiry, then they are stored, and keys:list shows each key on one line without the key', async () => {
    const run = await cli(['keys:create', '--directory', NORTH, '--name', 'Reporting tool', '--scopes', 'webhooks, read', '--expires-in-days', '30'], env);
    expect(run.code).toBe(0);
    const [key, idLine] = run.stdout.split('\n');
    const id = /^id: (\d+)$/.exec(idLine!)![1]!;
    const row = await knex('api_keys')
      .where({ id: Number(id) })
      .first();
    expect(row).toMatchObject({ name: 'Reporting tool', scopes: 'read,webhooks' });
    expect(Number(row.expires_at) - Number(row.created_at)).toBe(30 * 86_400);

    const list = await cli(['keys:list', '--directory', NORTH], env);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toContain(key);
    expect(list.stdout).not.toContain(row.key_hash);
    const lines = list.stdout.trimEnd().split('\n');
    // The fixture's key, the default key of the first test, this one.
    expect(lines).toHaveLength(3);
    const listed = lines.map(parseKeyLine);
    expect(listed.map((k) => Object.keys(k))).toEqual(Array(3).fill(['id', 'name', 'scopes', 'created', 'expires', 'last used', 'revoked']));
    expect(listed[0]).toMatchObject({ name: '"fixture"', scopes: 'read,write,webhooks', expires: 'never', 'last used': 'never', revoked: 'never' });
    const reporting = listed.find((k) => k.id === id)!;
    expect(reporting).toMatchObject({ name: '"Reporting tool"', scopes: 'read,webhooks', 'last used': 'never', revoked: 'never' });
    expect(reporting.created).toMatch(ISO);
    expect(reporting.expires).toMatch(ISO);
    expect(Date.parse(reporting.expires!) - Date.parse(reporting.created!)).toBe(30 * 86_400_000);
    expect(reporting.created).toBe(new Date(Number(row.created_at) * 1000).toISOString().replace('.000Z', 'Z'));

    await knex('api_keys')
      .where({ id: Number(id) })
      .update({ last_used_at: Number(row.created_at) + 90 });
    const used = (await cli(['keys:list', '--directory', NORTH], env)).stdout.trimEnd().split('\n').map(parseKeyLine);
    expect(used.find((k) => k.id === id)!['last used']).toBe(new Date((Number(row.created_at) + 90) * 1000).toISOString().replace('.000Z', 'Z'));
  });

  it("when a key is revoked, then keys:list shows when, a second revoke says it already was, and the directory's other keys stay", async () => {
    const created = await cli(['keys:create', '--directory', SOUTH, '--name', 'leaked'], env);
    const id = /^id: (\d+)$/m.exec(created.stdout)![1]!;
    const run = await cli(['keys:revoke', '--directory', SOUTH, '--key-id', id], env);
    expect(run).toMatchObject({ code: 0, stdout: `Revoked key ${id} of "${SOUTH}"; it is refused from now on.\n` });
    const listed = (await cli(['keys:list', '--directory', SOUTH], env)).stdout.trimEnd().split('\n').map(parseKeyLine);
    expect(listed.find((k) => k.id === id)!.revoked).toMatch(ISO);
    expect(listed.filter((k) => k.revoked === 'never')).toHaveLength(1);
    const again = await cli(['keys:revoke', '--directory', SOUTH, '--key-id', id], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^Key ${id} of "${SOUTH}" was already revoked at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\.\\n$`));
  });

  // Each a process start of its own; none may write anything. Checked before the database is reached, or read-only: once (SQLite) is enough.
  it.concurrent.for(profile === 'sqlite' ? BAD_ARGUMENTS : [])(
    'when the command line is %j, then exit %i naming the bad argument, and nothing changes',
    { timeout: 120_000 },
    async ([args, code, message], { expect }) => {
      const before = await allKeys(knex);
      const run = await cli(args, env);
      expect(run.code).toBe(code);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(message);
      expect(await allKeys(knex)).toEqual(before);
    },
  );

  it("when another directory's key id is revoked under this directory, then exit 1 naming --key-id, and nothing changes", async () => {
    const other = (await knex('api_keys').where({ directory: SOUTH }).whereNull('revoked_at').first()) as { id: number };
    const before = await allKeys(knex);
    const run = await cli(['keys:revoke', '--directory', NORTH, '--key-id', String(other.id)], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`--key-id: directory "${NORTH}" has no key ${other.id}`);
    expect(await allKeys(knex)).toEqual(before);
  });
});
