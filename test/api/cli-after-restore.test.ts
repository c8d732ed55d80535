import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createKnex } from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from '../adapters/knex-test-databases.js';
import { cli } from '../support/cli-runner.js';
import { freePort } from '../support/free-port.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const event = (id?: number) => ({ ...(id === undefined ? {} : { id }), directory: 'north', type: 'invoice.created', created: 1, data: '{}' });

describe.each(PROFILES)('pnpm cli db:after-restore (%s)', (profile) => {
  const opened: TestDatabase[] = [];
  const envOf = (db: TestDatabase): Record<string, string> =>
    db.databaseUrl ? { DATABASE_URL: db.databaseUrl, DATA_DIR: db.dataDir } : { DATA_DIR: db.dataDir };

  afterAll(async () => {
    await Promise.all(opened.map((db) => db.drop()));
  });

  it('when the database was never migrated, then it refuses with one line and creates nothing', { timeout: 120_000 }, async () => {
    const db = await openTestDatabase(profile, 'after-restore-empty', { migrate: false });
    opened.push(db);
    const run = await cli(['db:after-restore'], envOf(db));
    expect([run.code, run.stdout, run.stderr]).toEqual([
      1,
      '',
      'The database has no events table: it was never migrated, so no backup was restored into it. Nothing done.\n',
    ]);
    expect(await db.knex.schema.hasTable('feed_restores')).toBe(false);
  });

  it(
    'when run on a restored feed, then it records the end, the next event takes the first new id (after a reconnect too), and a second run adds a mark',
    { timeout: 120_000 },
    async () => {
      const db = await openTestDatabase(profile, 'after-restore');
      opened.push(db);
      await db.knex('events').insert([event(1), event(2), event(3)]);
      await db.knex('event_retention').insert({ directory: 'south', removed_through: 2 });
      const run = await cli(['db:after-restore', '--highest-issued', '7000000000'], envOf(db));
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const firstNewId = Math.max(7_000_000_001, Number(/new events start at (\d+)\./.exec(run.stdout)![1]));
      expect(run.stdout).toBe(
        `Restored feed ends at event 3; new events start at ${firstNewId}.\n` +
          `GET /v1/events answers 410 for a cursor from 4 to ${firstNewId - 1}; cursors at or below 3 go on.\n`,
      );
      expect(await db.knex('feed_restores').select('restored_end', 'first_new_id')).toEqual([{ restored_end: 3, first_new_id: firstNewId }]);

      // A new pool, as a restarted API would open: the sequence was kept.
      const reopened = createKnex({ databaseUrl: db.databaseUrl, dataDir: db.dataDir });
      try {
        await reopened('events').insert(event());
        expect(Number((await reopened('events').max({ id: 'id' }).first())!.id)).toBe(firstNewId);
      } finally {
        await reopened.destroy();
      }

      const again = await cli(['db:after-restore'], envOf(db));
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`Restored feed ends at event ${firstNewId}; new events start at `);
      expect(again.stdout).toContain(`Earlier restores: 3 -> ${firstNewId}.\n`);
      const marks = (await db.knex('feed_restores').select('restored_end', 'first_new_id').orderBy('id')) as Array<{
        restored_end: unknown;
        first_new_id: unknown;
      }>;
      expect(marks.map((mark) => Number(mark.restored_end))).toEqual([3, firstNewId]);
      expect(Number(marks[1]!.first_new_id)).toBeGreaterThan(firstNewId);
    },
  );

  it('when no event was ever published (SQLite keeps no sequence row yet), then the next one still takes the first new id', { timeout: 120_000 }, async () => {
    const db = await openTestDatabase(profile, 'after-restore-none');
    opened.push(db);
    const run = await cli(['db:after-restore'], envOf(db));
    expect(run.code).toBe(0);
    const firstNewId = Number(/^Restored feed ends at event 0; new events start at (\d+)\.$/m.exec(run.stdout)![1]);
    await db.knex('events').insert(event());
    expect(Number((await db.knex('events').max({ id: 'id' }).first())!.id)).toBe(firstNewId);
  });
});

describe('pnpm cli db:after-restore with Redis', () => {
  const prefix = `test-restore-${randomBytes(4).toString('hex')}`;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const opened: TestDatabase[] = [];
  afterAll(async () => {
    const left = await redis.keys(`${prefix}:*`);
    if (left.length > 0) await redis.del(...left);
    redis.disconnect();
    await Promise.all(opened.map((db) => db.drop()));
  });

  it('when Redis keeps Idempotency-Key answers, then it removes them (and only them) before it marks the feed', { timeout: 120_000 }, async () => {
    const db = await openTestDatabase('sqlite', 'after-restore-redis');
    opened.push(db);
    // 1,200 answers: more than one SCAN page.
    const answers = Array.from({ length: 1_200 }, (_, i) => `${prefix}:idempotency:${i.toString(16).padStart(64, '0')}`);
    for (let at = 0; at < answers.length; at += 400) await redis.mset(...answers.slice(at, at + 400).flatMap((key) => [key, '{"f":"x","a":{}}']));
    await redis.set(`${prefix}:rate:baltic`, '3');
    await redis.set(`other-${prefix}:idempotency:${'f'.repeat(64)}`, '{}');

    const run = await cli(['db:after-restore'], { DATA_DIR: db.dataDir, REDIS_URL, REDIS_PREFIX: prefix });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe('Removed 1200 Idempotency-Key answers kept in Redis: a retried POST runs anew.');
    expect(await redis.keys(`${prefix}:idempotency:*`)).toEqual([]);
    expect(await redis.get(`${prefix}:rate:baltic`)).toBe('3');
    expect(await redis.get(`other-${prefix}:idempotency:${'f'.repeat(64)}`)).toBe('{}');
    await redis.del(`other-${prefix}:idempotency:${'f'.repeat(64)}`);
    expect(await db.knex('feed_restores').count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it('when Redis cannot be reached, then it fails with one line, exit 1, and marks nothing (it can be run again)', { timeout: 120_000 }, async () => {
    const db = await openTestDatabase('sqlite', 'after-restore-no-redis');
    opened.push(db);
    const closed = await freePort();
    const run = await cli(['db:after-restore'], { DATA_DIR: db.dataDir, REDIS_URL: `redis://127.0.0.1:${closed}`, REDIS_PREFIX: prefix });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^The Idempotency-Key answers in Redis could not be removed \(Redis is not reachable \(\w+\)\); nothing was marked\. Run the command again once Redis answers\.\n$/,
    );
    expect(await db.knex.schema.hasTable('feed_restores')).toBe(true);
    expect(await db.knex('feed_restores').count({ n: '*' })).toEqual([{ n: 0 }]);
  });
});

describe('pnpm cli db:after-restore (command line)', () => {
  it('when --highest-issued is not an id, then a usage error (exit 2) before any database is opened', { timeout: 60_000 }, async () => {
    const run = await cli(['db:after-restore', '--highest-issued', '12x'], { DATA_DIR: '/nonexistent/never-opened' });
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe('--highest-issued must be an event id, a whole number below 2^53 (got "12x").');
  });
});
