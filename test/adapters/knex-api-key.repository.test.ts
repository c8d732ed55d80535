import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticateClientUseCase, type ApiKeyScope } from '@logi/domain';
import { KnexApiKeyRepository, KnexClientRepository, migrateLatest, migrateUpTo, Sha256ApiKeyHasher } from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';

const company = { name: 'Acme Sp. z o.o.', address: 'ul. Długa 1', vat: 'PL1', bankAccount: 'PL61 1090', bankName: 'Bank Pekao' };
const hasher = new Sha256ApiKeyHasher();
const ALL: ApiKeyScope[] = ['read', 'write', 'webhooks'];
const T = 1_800_000_000;

describe.each(PROFILES)('KnexApiKeyRepository on %s', (profile) => {
  let db: TestDatabase;
  let keys: KnexApiKeyRepository;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'api-keys');
    keys = new KnexApiKeyRepository(db.knex);
    const clients = new KnexClientRepository(db.knex);
    for (const directory of ['acme', 'ACME', 'other']) await clients.upsert({ directory, name: directory, company });
  });

  afterAll(async () => {
    await db?.drop();
  });

  const newKey = (directory: string, key: string, scopes: ApiKeyScope[] = ALL, expires: number | null = null) =>
    keys.create({ directory, name: `${key} name`, keyHash: hasher.hash(key), scopes, created: T, expires });

  it('when keys are created, then each is returned without its hash, and the directory lists them oldest first', async () => {
    const first = await newKey('acme', 'k-main');
    const second = await newKey('acme', 'k-report', ['webhooks', 'read'], T + 86_400);
    expect(first).toEqual({
      id: expect.any(Number),
      directory: 'acme',
      name: 'k-main name',
      scopes: ALL,
      created: T,
      expires: null,
      lastUsed: null,
      revoked: null,
    });
    expect(second).toMatchObject({ scopes: ['read', 'webhooks'], expires: T + 86_400 });
    expect(await keys.list('acme')).toEqual([first, second]);
    expect(JSON.stringify(await keys.list('acme'))).not.toContain(hasher.hash('k-main'));
    expect(await keys.list('nobody')).toEqual([]);
  });

  it('when a key is looked up, then only its own exact directory finds it, with the client', async () => {
    const found = await keys.findForAuthentication('acme', hasher.hash('k-main'));
    expect(found?.client).toEqual({ id: expect.any(Number), directory: 'acme', name: 'acme', company });
    expect(found?.key).toMatchObject({ directory: 'acme', name: 'k-main name', keyHash: hasher.hash('k-main'), scopes: ALL });
    expect(await keys.findForAuthentication('ACME', hasher.hash('k-main'))).toBeNull();
    expect(await keys.findForAuthentication('other', hasher.hash('k-main'))).toBeNull();
    expect(await keys.findForAuthentication('acme', hasher.hash('k-unknown'))).toBeNull();
  });

  it('when the key is looked up, then the statement is one unique-index dive, not a scan', async () => {
    const statements: Array<{ sql: string; bindings: unknown[] }> = [];
    const listener = (query: { sql: string; bindings?: unknown[] }) => statements.push({ sql: query.sql, bindings: query.bindings ?? [] });
    db.knex.on('query', listener);
    await keys.findForAuthentication('acme', hasher.hash('k-main')).finally(() => db.knex.off('query', listener));
    expect(statements).toHaveLength(1);
    const { sql, bindings } = statements[0]!;
    if (profile === 'mariadb') {
      const [rows] = (await db.knex.raw(`EXPLAIN ${sql}`, bindings as never)) as unknown as [Array<{ table: string; key: string | null; type: string }>];
      expect(rows.find((row) => row.table === 'k')).toMatchObject({ key: 'api_keys_hash_directory_unique', type: 'const' });
      expect(rows.find((row) => row.table === 'c')).toMatchObject({ key: 'clients_directory_unique', type: 'const' });
    } else {
      const rows = await db.knex.raw<Array<{ detail: string }>>(`EXPLAIN QUERY PLAN ${sql}`, bindings as never);
      const plan = rows.map((row) => row.detail).join('\n');
      expect(plan).toMatch(/SEARCH k USING INDEX api_keys_hash_directory_unique \(key_hash=\? AND directory=\?\)/);
      expect(plan).not.toMatch(/SCAN/);
    }
  });

  it('when a key is revoked, then it is marked once; a second revoke keeps the first time; another directory cannot revoke it', async () => {
    const key = await newKey('acme', 'k-revoke');
    expect(await keys.revoke('other', key.id, T + 5)).toBeNull();
    expect(await keys.revoke('ACME', key.id, T + 5)).toBeNull();
    expect(await keys.revoke('acme', key.id, T + 10)).toEqual({ key: { ...key, revoked: T + 10 }, revokedNow: true });
    expect(await keys.revoke('acme', key.id, T + 20)).toEqual({ key: { ...key, revoked: T + 10 }, revokedNow: false });
    expect((await keys.findForAuthentication('acme', hasher.hash('k-revoke')))?.key.revoked).toBe(T + 10);
  });

  it('when every key of a directory is revoked, then the ones not revoked yet are counted and another directory keeps its keys', async () => {
    await newKey('other', 'k-other-1');
    await newKey('other', 'k-other-2');
    await newKey('ACME', 'k-upper');
    expect(await keys.revokeAll('other', T + 30)).toBe(2);
    expect(await keys.revokeAll('other', T + 40)).toBe(0);
    expect((await keys.list('other')).map((k) => k.revoked)).toEqual([T + 30, T + 30]);
    expect((await keys.list('ACME')).map((k) => k.revoked)).toEqual([null]);
  });

  it('when a use is recorded, then the time is kept and never moves back', async () => {
    const key = await newKey('acme', 'k-used');
    await keys.recordUse(key.id, T + 120);
    await keys.recordUse(key.id, T + 60);
    expect((await keys.list('acme')).find((k) => k.id === key.id)?.lastUsed).toBe(T + 120);
  });
});

describe.each(PROFILES)('upgrading a database of the previous release on %s', (profile) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'keys-upgrade', { migrate: false });
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('when a schema migrated to 015 holds clients with their one key each, then after migrating on every old key works with every scope', async () => {
    await migrateUpTo(db.knex, '015-webhook-fair-claims');
    expect(await db.knex.schema.hasTable('api_keys')).toBe(false);
    // As the previous release wrote them: the hash in clients.api_key_hash.
    for (const directory of ['north', 'south'])
      await db.knex('clients').insert({
        directory,
        name: directory,
        api_key_hash: hasher.hash(`old-key-${directory}`),
        company_name: 'C',
        company_address: '',
        company_vat: '',
        company_bank_account: '',
        company_bank_name: '',
        created_at: T,
        updated_at: T,
      });

    expect(await migrateLatest(db.knex)).toContain('017-api-keys');

    const keys = new KnexApiKeyRepository(db.knex);
    const auth = new AuthenticateClientUseCase({ keys, hasher, clock: { now: () => new Date((T + 100) * 1000) } });
    for (const directory of ['north', 'south']) {
      const result = await auth.execute({ authorization: `Bearer old-key-${directory}`, directory });
      expect(result).toMatchObject({ client: { directory }, key: { scopes: ALL } });
      expect(await keys.list(directory)).toEqual([
        { id: expect.any(Number), directory, name: 'default', scopes: ALL, created: T, expires: null, lastUsed: T + 100, revoked: null },
      ]);
    }
    await expect(auth.execute({ authorization: 'Bearer old-key-north', directory: 'south' })).rejects.toThrow('Authentication failed');
  });

  it('when a migrated key is revoked, then the old column forgets its hash too (a previous-release process would not accept it)', async () => {
    const keys = new KnexApiKeyRepository(db.knex);
    const [north] = await keys.list('north');
    await keys.revoke('north', north!.id, T + 200);
    const rows = (await db.knex('clients').select('directory', 'api_key_hash').orderBy('directory')) as Array<{ directory: string; api_key_hash: string }>;
    expect(rows).toEqual([
      { directory: 'north', api_key_hash: '' },
      { directory: 'south', api_key_hash: hasher.hash('old-key-south') },
    ]);
  });
});
