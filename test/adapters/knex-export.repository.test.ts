import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KnexExportRepository } from '@logi/adapters';
import type { NewExport } from '@logi/domain';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';

/**
 * The exports table as a directory's limits and the runners' queue: limits counted under the directory's lock, the
 * storage budget kept when an archive is marked succeeded, and directories taking turns for runners.
 */
const NOW = 1_764_000_000;
const LIMITS = { maxActive: 3, maxKeptBytes: 1000, now: NOW };

function draft(directory: string): NewExport {
  return { directory, created: NOW, filters: {}, documents: ['pdf'], lang: 'en', duplicate: false, csv: true, eventsCursor: 0 };
}

function row(directory: string) {
  return { directory, created: NOW, filters: '{}', documents: '["pdf"]', lang: 'en', duplicate: 0, csv: 1, done: 0, events_cursor: 0, attempt: 0 };
}

async function addClient(db: TestDatabase, directory: string): Promise<void> {
  await db.knex('clients').insert({
    directory,
    name: directory,
    api_key_hash: directory.padEnd(64, '0').slice(0, 64),
    company_name: directory,
    company_address: 'Street 1',
    company_vat: 'PL1',
    company_bank_account: 'PL00',
    company_bank_name: 'Bank',
    created_at: NOW,
    updated_at: NOW,
  });
}

for (const profile of PROFILES) {
  describe(`KnexExportRepository (${profile})`, () => {
    let db: TestDatabase;
    let repo: KnexExportRepository;
    beforeAll(async () => {
      db = await openTestDatabase(profile, 'exports_repo');
      repo = new KnexExportRepository(db.knex);
      for (const directory of ['race', 'budget', 'fair-a', 'fair-b']) await addClient(db, directory);
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('when many requests of one directory arrive at once, then exactly maxActive are stored and the others refused', async () => {
      const results = await Promise.all(Array.from({ length: 24 }, () => repo.create(draft('race'), LIMITS)));
      expect(results.filter((result) => 'created' in result)).toHaveLength(3);
      expect(results.filter((result) => 'refused' in result && result.refused === 'active')).toHaveLength(21);
      expect(await db.knex('exports').where({ directory: 'race' }).count({ n: '*' })).toEqual([{ n: 3 }]);
    });

    // MariaDB only: SQLite has one connection, so a second request cannot even start while another's transaction is open.
    if (profile === 'mariadb') {
      it('when another request of the directory is between its insert and its commit, then a second request waits for it and is refused', async () => {
        await addClient(db, 'held');
        // Another request mid-way: the directory locked, its export inserted, not yet committed.
        const other = await db.knex.transaction();
        let answered = false;
        let answeredBeforeTheCommit: boolean | undefined;
        let second: Promise<unknown> | undefined;
        try {
          await other('clients').select('id').where({ directory: 'held' }).forUpdate();
          await other('exports').insert({ ...row('held'), status: 'queued' });
          second = repo.create(draft('held'), { ...LIMITS, maxActive: 1 }).finally(() => {
            answered = true;
          });
          // Either the second request answers at once (it did not wait for the other), or it waits on the lock.
          await vi.waitFor(
            async () => {
              const [[waiting]] = (await db.knex.raw(
                "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND INFO LIKE 'select `id` from `clients` where `directory` = ''held'' for update'",
              )) as [[{ n: number }]];
              expect(answered || Number(waiting.n) > 0).toBe(true);
            },
            { timeout: 10_000, interval: 20 },
          );
          answeredBeforeTheCommit = answered;
          await other.commit();
        } finally {
          if (!other.isCompleted()) await other.rollback();
        }
        expect(await second).toEqual({ refused: 'active' });
        expect(answeredBeforeTheCommit).toBe(false);
        expect(await db.knex('exports').where({ directory: 'held' }).count({ n: '*' })).toEqual([{ n: 1 }]);
      });
    }

    it('when the kept archives reach the budget, then a request is refused with when the oldest expires, and an archive that does not fit is not marked', async () => {
      const first = await repo.create(draft('budget'), LIMITS);
      const id = (first as { created: { id: number } }).created.id;
      await db.knex('exports').where({ id }).update({ status: 'running', attempt: 1 });
      const archive = { archiveKey: `exports/${id}-1.zip`, sha256: 'a'.repeat(64), done: 1, finished: NOW, expires: NOW + 500, maxKeptBytes: 1000 };
      expect(await repo.succeed(id, 1, { ...archive, size: 1001 })).toBe('over-budget');
      expect(await db.knex('exports').where({ id }).first()).toMatchObject({ status: 'running', archive_key: null });
      expect(await repo.succeed(id, 1, { ...archive, size: 600 })).toBe('succeeded');
      // 600 of 1000 kept: still room for a request; its archive of 500 would not fit.
      const second = await repo.create(draft('budget'), LIMITS);
      const secondId = (second as { created: { id: number } }).created.id;
      await db.knex('exports').where({ id: secondId }).update({ status: 'running', attempt: 1 });
      expect(await repo.succeed(secondId, 1, { ...archive, archiveKey: `exports/${secondId}-1.zip`, size: 500 })).toBe('over-budget');
      expect(await repo.succeed(secondId, 1, { ...archive, archiveKey: `exports/${secondId}-1.zip`, size: 400, expires: NOW + 900 })).toBe('succeeded');
      expect(await repo.create(draft('budget'), LIMITS)).toEqual({ refused: 'storage', oldestExpires: NOW + 500 });
      // Once the oldest expired, its bytes are no longer kept.
      expect(await repo.create(draft('budget'), { ...LIMITS, now: NOW + 500 })).toMatchObject({ created: { directory: 'budget' } });
    });

    it('when one directory has a backlog and another asks for one export, then the other directory’s export is claimed next', async () => {
      const a = [];
      for (let i = 0; i < 4; i += 1) a.push(((await repo.create(draft('fair-a'), { ...LIMITS, maxActive: 10 })) as { created: { id: number } }).created.id);
      // Only the fair-* exports are waiting.
      await db.knex('exports').whereNotIn('directory', ['fair-a', 'fair-b']).delete();
      const first = await repo.claimNext(1_000, 60_000);
      expect(first?.export.id).toBe(a[0]);
      const b = ((await repo.create(draft('fair-b'), LIMITS)) as { created: { id: number } }).created.id;
      await repo.fail(a[0]!, first!.attempt, { error: 'Cancelled.', finished: NOW, expires: NOW + 100 });
      expect((await repo.claimNext(2_000, 60_000))?.export.id).toBe(b);
      expect((await repo.claimNext(3_000, 60_000))?.export.id).toBe(a[1]);
      expect(await repo.isRunning(b, 1)).toBe(true);
      expect(await repo.isRunning(b, 2)).toBe(false);
      expect(await repo.isRunning(a[0]!, 1)).toBe(false);
    });
  });
}
