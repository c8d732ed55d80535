import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex, KnexUploadQuotaRepository } from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';

const DAY = '2026-03-14';

describe.each(PROFILES)('KnexUploadQuotaRepository on %s', (profile) => {
  let db: TestDatabase;
  /** A second pool on the same database: another process. */
  let other: Knex;
  let quota: KnexUploadQuotaRepository;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'upload_quota');
    other = createKnex({ databaseUrl: db.databaseUrl, dataDir: db.dataDir });
    quota = new KnexUploadQuotaRepository(db.knex);
  });

  afterAll(async () => {
    await other?.destroy();
    await db?.drop();
  });

  it('when reservations fit, then they add up to the limit exactly; one byte more is refused and adds nothing', async () => {
    expect(await quota.used('north', DAY)).toBe(0);
    expect(await quota.reserve('north', DAY, 600, 1000)).toBe(true);
    expect(await quota.reserve('north', DAY, 400, 1000)).toBe(true);
    expect(await quota.reserve('north', DAY, 1, 1000)).toBe(false);
    expect(await quota.used('north', DAY)).toBe(1000);
  });

  it('when a reservation is given back, then its bytes are free again; usage never goes below 0', async () => {
    await quota.release('north', DAY, 400);
    expect(await quota.used('north', DAY)).toBe(600);
    expect(await quota.reserve('north', DAY, 400, 1000)).toBe(true);
    await quota.release('south', DAY, 50);
    expect(await quota.used('south', DAY)).toBe(0);
    expect(await quota.reserve('south', DAY, 10, 1000)).toBe(true);
    await quota.release('south', DAY, 50);
    expect(await quota.used('south', DAY)).toBe(0);
  });

  it('when another day or another directory (case-sensitive) reserves, then it has its own usage', async () => {
    expect(await quota.reserve('north', '2026-03-15', 1000, 1000)).toBe(true);
    expect(await quota.reserve('North', DAY, 1000, 1000)).toBe(true);
    expect(await quota.used('north', DAY)).toBe(1000);
  });

  it('when two processes reserve for one directory at once, then together they never pass the limit', async () => {
    const processes = [quota, new KnexUploadQuotaRepository(other)];
    // 40 reservations of 100 bytes against 1,000: exactly 10 succeed, whichever process made them.
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => processes[i % 2]!.reserve('racing', DAY, 100, 1000)));
    expect(results.filter(Boolean)).toHaveLength(10);
    expect(await quota.used('racing', DAY)).toBe(1000);
  });

  it('when usage passes 2^32 bytes, then it is still counted exactly', async () => {
    const big = 5 * 2 ** 30;
    expect(await quota.reserve('large', DAY, big, 10 * 2 ** 30)).toBe(true);
    expect(await quota.used('large', DAY)).toBe(big);
  });
  it('when old days are removed, then only the rows before that day go, of every directory', async () => {
    expect(await quota.reserve('west', '2026-01-01', 5, 1000)).toBe(true);
    expect(await quota.reserve('east', '2026-01-02', 5, 1000)).toBe(true);
    expect(await quota.reserve('west', '2026-01-03', 5, 1000)).toBe(true);
    expect(await quota.removeBefore('2026-01-03')).toBe(2);
    expect([await quota.used('west', '2026-01-01'), await quota.used('east', '2026-01-02'), await quota.used('west', '2026-01-03')]).toEqual([0, 0, 5]);
  });
});
