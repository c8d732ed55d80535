import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewOrderFile } from '@logi/domain';
import { KnexOrderFileRepository, loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture, SOUTH } from './knex-repository.fixture.js';

const file = (overrides: Partial<NewOrderFile> = {}): NewOrderFile => ({
  directory: NORTH,
  orderId: 12,
  categoryId: 1,
  name: 'cmr scan ł.pdf',
  size: 1234,
  contentType: 'application/pdf',
  sha256: 'a'.repeat(64),
  storageKey: 'orders/north-freight/12/k1',
  createdAt: 1_763_800_000,
  ...overrides,
});

/** A deadline far enough ahead not to matter. */
const inTime = () => Date.now() + 60_000;

describe.each(PROFILES)('KnexOrderFileRepository on %s', (profile) => {
  let db: TestDatabase;
  let files: KnexOrderFileRepository;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'order_files');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    files = new KnexOrderFileRepository(db.knex);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('when a file is inserted, then the row holds every field and is found by its storage key', async () => {
    const row = await files.insertOnce(file(), inTime());
    expect(row).toEqual({ id: expect.any(Number), ...file() });
    expect(await files.findByStorageKey('orders/north-freight/12/k1')).toEqual(row);
    expect(await files.findByStorageKey('orders/none')).toBeNull();
  });

  it('when the same storage key is inserted again, even at once, then there is still one row', async () => {
    const first = await files.insertOnce(file({ storageKey: 'orders/north-freight/12/k2' }), inTime());
    const again = await Promise.all(
      Array.from({ length: 5 }, () => files.insertOnce(file({ storageKey: 'orders/north-freight/12/k2', name: 'other name' }), inTime())),
    );
    expect(again.map((r) => r?.id)).toEqual(Array(5).fill(first?.id));
    expect(again[0]?.name).toBe('cmr scan ł.pdf');
    expect(await db.knex('order_files').where({ storage_key: 'orders/north-freight/12/k2' }).count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it("when a file is found by id, then only in its own directory (another directory's id is null)", async () => {
    const row = await files.insertOnce(file({ storageKey: 'orders/north-freight/12/by-id' }), inTime());
    expect(await files.findById(NORTH, row!.id)).toEqual(row);
    expect(await files.findById(SOUTH, row!.id)).toBeNull();
    expect(await files.findById(NORTH, 987_654)).toBeNull();
    // The listing test below counts the order's rows.
    await db.knex('order_files').where({ id: row!.id }).delete();
  });

  it('when a file has no category, then category_id is null', async () => {
    const row = await files.insertOnce(file({ storageKey: 'orders/north-freight/12/k3', categoryId: null }), inTime());
    expect(row?.categoryId).toBeNull();
  });

  it('when the order does not exist, then the insert fails instead of being ignored', async () => {
    await expect(files.insertOnce(file({ storageKey: 'orders/north-freight/999/k', orderId: 999 }), inTime())).rejects.toThrow();
    expect(await files.findByStorageKey('orders/north-freight/999/k')).toBeNull();
  });

  it('when the deadline has passed by the time the row would be written, then nothing is written and the answer is null', async () => {
    expect(await files.insertOnce(file({ storageKey: 'orders/north-freight/12/late' }), Date.now() - 1)).toBeNull();
    expect(await files.findByStorageKey('orders/north-freight/12/late')).toBeNull();
  });

  it('when the row exists already, then it is the answer even past the deadline', async () => {
    const first = await files.insertOnce(file({ storageKey: 'orders/north-freight/12/k4' }), inTime());
    expect(await files.insertOnce(file({ storageKey: 'orders/north-freight/12/k4' }), Date.now() - 1)).toEqual(first);
    await db.knex('order_files').where({ storage_key: 'orders/north-freight/12/k4' }).delete();
  });

  it("when files of an order are listed, then only that directory's, oldest first", async () => {
    const listed = await files.listByOrder(NORTH, 12);
    expect(listed.map((f) => f.storageKey)).toEqual(['orders/north-freight/12/k1', 'orders/north-freight/12/k2', 'orders/north-freight/12/k3']);
    expect(await files.listByOrder(SOUTH, 12)).toEqual([]);
  });

  it('when asked which storage keys have rows, then exactly those that match byte for byte are named, however many are asked', async () => {
    const stored = ['orders/north-freight/12/k1', 'orders/north-freight/12/k2'];
    // More keys than one IN list holds, with the stored ones at both ends and near misses in between.
    const asked = [
      stored[0]!,
      ...Array.from({ length: 1_200 }, (_, i) => `orders/north-freight/12/none-${i}`),
      'orders/north-freight/12/K1',
      'orders/north-freight/12/k1 ',
      'orders/north-freight/12',
      stored[1]!,
      stored[0]!,
    ];
    expect([...(await files.keysWithRows(asked))].sort()).toEqual(stored);
    expect(await files.keysWithRows([])).toEqual(new Set());
    expect(await files.keysWithRows(['orders/north-freight/12/nothing'])).toEqual(new Set());
    // MariaDB compares VARCHARs ignoring trailing spaces; the answer still names only exact keys.
    expect(await files.keysWithRows(['orders/north-freight/12/k1 ', 'orders/north-freight/12/K1'])).toEqual(new Set());
  });

  it('when the database does not answer, then asking which keys have rows fails instead of naming none', async () => {
    const closed = await openTestDatabase(profile, 'order_files_closed');
    const repository = new KnexOrderFileRepository(closed.knex);
    await closed.drop();
    await expect(repository.keysWithRows(['orders/north-freight/12/k1'])).rejects.toThrow();
  });
});
