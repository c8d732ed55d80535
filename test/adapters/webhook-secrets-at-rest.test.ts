import { mkdtemp, readFile, rm, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ReencryptWebhookSecretsUseCase } from '@logi/domain';
import {
  AesGcmSecretCipher,
  createSecretCipher,
  KnexWebhookSecretStore,
  localSecretKey,
  LOCAL_SECRET_KEY_FILE,
  loadFixtures,
  Sha256ApiKeyHasher,
} from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture } from './knex-repository.fixture.js';

const key = (id: string, byte: number) => ({ id, key: Buffer.alloc(32, byte) });
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('AesGcmSecretCipher', () => {
  it('when a secret is sealed, then the stored form names the key, hides the secret, differs each time, and opens to the secret', () => {
    const cipher = new AesGcmSecretCipher([key('k1', 1)]);
    const [a, b] = [cipher.seal(SECRET), cipher.seal(SECRET)];
    expect(a).toMatch(/^v1:k1:[A-Za-z0-9+/]+=*$/);
    expect(a).not.toContain(SECRET.slice(6));
    expect(a).not.toBe(b);
    expect([cipher.open(a), cipher.open(b)]).toEqual([SECRET, SECRET]);
    // The widened column (VARCHAR(255)) holds it with room for a 32-character key id.
    expect(new AesGcmSecretCipher([key('k'.repeat(32), 1)]).seal(SECRET).length).toBeLessThan(200);
  });

  it('when a value is plain text from before encryption, then it opens as itself and is stale once a key is configured', () => {
    expect(new AesGcmSecretCipher([key('k1', 1)]).open(SECRET)).toBe(SECRET);
    expect(new AesGcmSecretCipher([key('k1', 1)]).isStale(SECRET)).toBe(true);
    expect(new AesGcmSecretCipher([]).isStale(SECRET)).toBe(false);
    expect(new AesGcmSecretCipher([]).seal(SECRET)).toBe(SECRET);
  });

  it('when keys rotate, then the new key seals, the old one still opens, and values under the old key are stale', () => {
    const old = new AesGcmSecretCipher([key('k1', 1)]).seal(SECRET);
    const both = new AesGcmSecretCipher([key('k2', 2), key('k1', 1)]);
    expect(both.open(old)).toBe(SECRET);
    expect(both.keyIdOf(both.seal(SECRET))).toBe('k2');
    expect([both.isStale(old), both.isStale(both.seal(SECRET))]).toEqual([true, false]);
  });

  it('when the key is missing, another key has its id, the value was altered or moved under another id, then opening throws', () => {
    const sealed = new AesGcmSecretCipher([key('k1', 1)]).seal(SECRET);
    expect(() => new AesGcmSecretCipher([key('k2', 2)]).open(sealed)).toThrow(/"k1".*not configured/);
    expect(() => new AesGcmSecretCipher([key('k1', 9)]).open(sealed)).toThrow(/does not open/);
    const bytes = Buffer.from(sealed.split(':')[2]!, 'base64');
    bytes[bytes.length - 1]! ^= 1;
    expect(() => new AesGcmSecretCipher([key('k1', 1)]).open(`v1:k1:${bytes.toString('base64')}`)).toThrow(/does not open/);
    const both = new AesGcmSecretCipher([key('k1', 1), key('k2', 1)]);
    expect(() => both.open(sealed.replace('v1:k1:', 'v1:k2:'))).toThrow(/does not open/);
  });
});

describe('the embedded profile key in DATA_DIR', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'logi-secret-key-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await unlink(path.join(dataDir, LOCAL_SECRET_KEY_FILE)).catch(() => undefined);
  });

  it('when no key is configured, then one is made once, readable by its owner only, and used again by every later process', async () => {
    const first = createSecretCipher({ secretKeys: [], databaseUrl: null, dataDir });
    const file = path.join(dataDir, LOCAL_SECRET_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toMatch(/^local-[0-9a-f]{8}:[A-Za-z0-9+/]{43}=\n$/);
    const again = createSecretCipher({ secretKeys: [], databaseUrl: null, dataDir });
    expect(again.keyIds).toEqual(first.keyIds);
    expect(again.open(first.seal(SECRET))).toBe(SECRET);
  });

  it('when many processes make the key at once, then all get the same one', () => {
    const ids = Array.from({ length: 20 }, () => localSecretKey(dataDir, { create: true })!.id);
    expect(new Set(ids).size).toBe(1);
  });

  it('when keys are configured, then the configured one seals and the local key (if any) still opens; a shared database gets no local key', async () => {
    const local = createSecretCipher({ secretKeys: [], databaseUrl: null, dataDir });
    const sealed = local.seal(SECRET);
    const configured = createSecretCipher({ secretKeys: [key('prod1', 3)], databaseUrl: null, dataDir });
    expect(configured.keyIds).toEqual(['prod1', local.keyIds[0]]);
    expect(configured.open(sealed)).toBe(SECRET);
    expect(createSecretCipher({ secretKeys: [key('prod1', 3)], databaseUrl: 'mysql://x@y/z', dataDir: path.join(dataDir, 'none') }).keyIds).toEqual(['prod1']);
  });

  it('when a shared database has no key configured, then no cipher is made: the error names SECRETS_ENCRYPTION_KEYS and the command that makes one', () => {
    expect(() => createSecretCipher({ secretKeys: [], databaseUrl: 'mysql://x@y/z', dataDir: path.join(dataDir, 'none') })).toThrow(
      /^Configuration error: SECRETS_ENCRYPTION_KEYS must be set when DATABASE_URL is set .*`pnpm cli secrets:generate-key`/,
    );
  });
});

describe.each(PROFILES)('KnexWebhookSecretStore on %s', (profile) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openTestDatabase(profile, 'webhook_secrets');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('when an upgraded database holds plain secrets, then re-encryption seals current and previous ones in the widened columns, names the key in use, and a second run changes nothing', async () => {
    const old = new AesGcmSecretCipher([key('old', 1)]);
    const endpoint = (id: number, secret: string, previous: string | null) => ({
      id,
      directory: NORTH,
      url: `https://hooks.example.com/${id}`,
      event_types: '[]',
      enabled: 1,
      secret,
      previous_secret: previous,
      previous_secret_until: previous === null ? null : 1,
      created: 1,
    });
    await db.knex('webhook_endpoints').insert([endpoint(1, SECRET, null), endpoint(2, old.seal(`${SECRET}2`), `${SECRET}1`)]);
    const store = new KnexWebhookSecretStore(db.knex);
    expect(await store.keyIdsInUse()).toEqual(['old']);
    const cipher = new AesGcmSecretCipher([key('k'.repeat(32), 2), key('old', 1)]);
    expect(await new ReencryptWebhookSecretsUseCase({ store, cipher }).execute()).toEqual({ endpoints: 2, reencrypted: 3, wasPlain: 2, skipped: 0 });
    const rows = (await db.knex('webhook_endpoints').select('secret', 'previous_secret').orderBy('id')) as Array<{
      secret: string;
      previous_secret: string | null;
    }>;
    expect(rows.map((row) => [cipher.open(row.secret), row.previous_secret && cipher.open(row.previous_secret)])).toEqual([
      [SECRET, null],
      [`${SECRET}2`, `${SECRET}1`],
    ]);
    expect(rows.every((row) => row.secret.startsWith(`v1:${'k'.repeat(32)}:`))).toBe(true);
    expect(await store.keyIdsInUse()).toEqual(['k'.repeat(32)]);
    expect(await new ReencryptWebhookSecretsUseCase({ store, cipher }).execute()).toEqual({ endpoints: 2, reencrypted: 0, wasPlain: 0, skipped: 0 });
  });

  it('when one stored value is asked for per key id, then it is one sealed with exactly that id (current or previous secret), a "_" in the id matching only itself', async () => {
    const store = new KnexWebhookSecretStore(db.knex);
    const [under, other, upper] = [new AesGcmSecretCipher([key('a_b', 4)]), new AesGcmSecretCipher([key('aXb', 5)]), new AesGcmSecretCipher([key('A_B', 6)])];
    const base = { directory: NORTH, url: 'https://hooks.example.com/ids', event_types: '[]', enabled: 1, created: 1 };
    await db.knex('webhook_endpoints').insert([
      { ...base, id: 101, secret: other.seal(SECRET), previous_secret: null },
      { ...base, id: 102, secret: upper.seal(SECRET), previous_secret: null },
      { ...base, id: 103, secret: SECRET, previous_secret: under.seal(`${SECRET}0`), previous_secret_until: 1 },
    ]);
    try {
      const sample = await store.sealedWith('a_b');
      expect(sample && under.open(sample)).toBe(`${SECRET}0`);
      expect(await store.sealedWith('nobody')).toBeNull();
      expect((await store.page(100, 10, 'plain')).map((row) => row.endpointId)).toEqual([103]);
    } finally {
      await db.knex('webhook_endpoints').whereIn('id', [101, 102, 103]).delete();
    }
  });

  it('when the secret changed after it was read (a rotation), then the stale write is not made', async () => {
    const store = new KnexWebhookSecretStore(db.knex);
    const [read] = await store.page(0, 1);
    await db.knex('webhook_endpoints').where({ id: read!.endpointId }).update({ secret: 'whsec_rotated' });
    expect(await store.replace(read!, { ...read!, secret: 'v1:x:AAAA' })).toBe(false);
    expect((await db.knex('webhook_endpoints').select('secret').where({ id: read!.endpointId }).first()).secret).toBe('whsec_rotated');
  });
});
