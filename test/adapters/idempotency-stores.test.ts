import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createRedis, KnexIdempotencyStore, RedisIdempotencyStore } from '@logi/adapters';
import type { IdempotencyStorePort } from '@logi/domain';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DAY_MS = 24 * 60 * 60_000;
const LOCK_MS = 90_000;
const ANSWER = { message: 'Files uploaded', orderId: 3001, uploaded: [{ id: 7, name: 'cmr.pdf', categoryId: null }], failed: [] };

let keys = 0;
const scope = (directory = 'baltic') => ({ directory, key: `key-${++keys}-${randomBytes(3).toString('hex')}` });

/** What every store must do, whatever it keeps the keys in. */
function behavesAsAnIdempotencyStore(open: () => IdempotencyStorePort) {
  it('when a key is new, then it is claimed; the same request again is in flight, another one a mismatch', async () => {
    const store = open();
    const s = scope();
    expect(await store.claim(s, 'request-a', LOCK_MS)).toMatchObject({ kind: 'claimed', token: expect.any(String) });
    expect(await store.claim(s, 'request-a', LOCK_MS)).toEqual({ kind: 'in-flight' });
    expect(await store.claim(s, 'request-b', LOCK_MS)).toEqual({ kind: 'mismatch' });
  });

  it('when the holder completes, then the answer is replayed to the same request and another request is a mismatch', async () => {
    const store = open();
    const s = scope();
    const claim = await store.claim(s, 'request-a', LOCK_MS);
    await store.complete(s, (claim as { token: string }).token, ANSWER, DAY_MS);
    expect(await store.claim(s, 'request-a', LOCK_MS)).toEqual({ kind: 'replay', answer: ANSWER });
    expect(await store.claim(s, 'request-b', LOCK_MS)).toEqual({ kind: 'mismatch' });
  });

  it('when the holder releases the key, then the next request claims it anew', async () => {
    const store = open();
    const s = scope();
    const claim = await store.claim(s, 'request-a', LOCK_MS);
    await store.release(s, (claim as { token: string }).token);
    expect(await store.claim(s, 'request-b', LOCK_MS)).toMatchObject({ kind: 'claimed' });
  });

  it('when a token that does not hold the key completes or releases it, then nothing changes', async () => {
    const store = open();
    const s = scope();
    await store.claim(s, 'request-a', LOCK_MS);
    await store.complete(s, 'not-the-token', ANSWER, DAY_MS);
    await store.release(s, 'not-the-token');
    expect(await store.claim(s, 'request-a', LOCK_MS)).toEqual({ kind: 'in-flight' });
  });

  it('when many requests claim one key at once, then exactly one holds it', async () => {
    const store = open();
    const s = scope();
    const claims = await Promise.all(Array.from({ length: 8 }, () => store.claim(s, 'request-a', LOCK_MS)));
    expect(claims.filter((c) => c.kind === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.kind === 'in-flight')).toHaveLength(7);
  });

  it('when keys differ in directory or letter case, then they are different keys; a 255-character key fits', async () => {
    const store = open();
    const key = `Case-${randomBytes(4).toString('hex')}-${'~'.repeat(250)}`.slice(0, 255);
    expect(key).toHaveLength(255);
    expect(await store.claim({ directory: 'baltic', key }, 'request-a', LOCK_MS)).toMatchObject({ kind: 'claimed' });
    expect(await store.claim({ directory: 'alpine', key }, 'request-b', LOCK_MS)).toMatchObject({ kind: 'claimed' });
    expect(await store.claim({ directory: 'baltic', key: key.toLowerCase() }, 'request-c', LOCK_MS)).toMatchObject({ kind: 'claimed' });
    expect(await store.claim({ directory: 'BALTIC', key }, 'request-d', LOCK_MS)).toMatchObject({ kind: 'claimed' });
  });
}

describe.each(PROFILES)('KnexIdempotencyStore on %s', (profile) => {
  let db: TestDatabase;
  let clock = 1_800_000_000_000;
  beforeAll(async () => {
    db = await openTestDatabase(profile, 'idempotency');
  });
  afterAll(async () => {
    await db?.drop();
  });
  const open = () => new KnexIdempotencyStore(db.knex, () => clock);

  behavesAsAnIdempotencyStore(open);

  it('when a lock runs out (its process died), then the next request takes the key over', async () => {
    const store = open();
    const s = scope();
    await store.claim(s, 'request-a', LOCK_MS);
    clock += LOCK_MS - 1;
    expect(await store.claim(s, 'request-a', LOCK_MS)).toEqual({ kind: 'in-flight' });
    clock += 1;
    expect(await store.claim(s, 'request-b', LOCK_MS)).toMatchObject({ kind: 'claimed' });
  });

  it('when a kept answer is 24 hours old, then it is forgotten, and the housekeeping sweep deletes only such rows', async () => {
    const store = open();
    const old = scope();
    const young = scope();
    const first = await store.claim(old, 'request-a', LOCK_MS);
    await store.complete(old, (first as { token: string }).token, ANSWER, DAY_MS);
    clock += DAY_MS - 1;
    expect(await store.claim(old, 'request-a', LOCK_MS)).toMatchObject({ kind: 'replay' });
    await store.claim(young, 'request-a', LOCK_MS);
    clock += 1;
    const before = await db.knex('idempotency_keys').where({ idempotency_key: old.key }).count({ n: '*' });
    expect(Number(before[0]!.n)).toBe(1);
    expect(await store.deleteExpired()).toBeGreaterThanOrEqual(1);
    expect(await db.knex('idempotency_keys').whereIn('idempotency_key', [old.key, young.key]).pluck('idempotency_key')).toEqual([young.key]);
    expect(await store.claim(old, 'request-a', LOCK_MS)).toMatchObject({ kind: 'claimed' });
  });
});

describe('RedisIdempotencyStore', () => {
  const prefix = `test-idempotency-${randomBytes(4).toString('hex')}`;
  let redis: Redis;
  beforeAll(async () => {
    redis = createRedis(REDIS_URL, { role: 'client', connectionName: `${prefix}:test` });
  });
  afterAll(async () => {
    const stored = await redis.keys(`${prefix}:*`);
    if (stored.length) await redis.del(...stored);
    redis.disconnect();
  });
  const open = () => new RedisIdempotencyStore(redis, prefix);

  behavesAsAnIdempotencyStore(open);

  it('when a key is claimed and then answered, then the lock lives for its lock time and the answer for 24 hours', async () => {
    const store = open();
    const s = scope();
    const claim = await store.claim(s, 'request-a', LOCK_MS);
    const lockTtl = await redis.pttl(store.redisKey(s));
    expect(lockTtl).toBeGreaterThan(LOCK_MS - 5_000);
    expect(lockTtl).toBeLessThanOrEqual(LOCK_MS);
    await store.complete(s, (claim as { token: string }).token, ANSWER, DAY_MS);
    const answerTtl = await redis.pttl(store.redisKey(s));
    expect(answerTtl).toBeGreaterThan(DAY_MS - 5_000);
    expect(answerTtl).toBeLessThanOrEqual(DAY_MS);
    expect(store.redisKey(s).startsWith(`${prefix}:idempotency:`)).toBe(true);
  });

  it('when the key has run out (TTL reached), then the next request claims it anew', async () => {
    const store = open();
    const s = scope();
    const claim = await store.claim(s, 'request-a', LOCK_MS);
    await store.complete(s, (claim as { token: string }).token, ANSWER, DAY_MS);
    // What Redis does when the TTL is reached.
    await redis.pexpire(store.redisKey(s), 0);
    expect(await store.claim(s, 'request-b', LOCK_MS)).toMatchObject({ kind: 'claimed' });
  });

  it('when Redis does not answer, then the store says the service is unavailable', async () => {
    const down = createRedis('redis://127.0.0.1:1', { role: 'client', connectTimeoutMs: 200 });
    try {
      const store = new RedisIdempotencyStore(down, prefix);
      await expect(store.claim(scope(), 'request-a', LOCK_MS)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    } finally {
      down.disconnect();
    }
  });
});
