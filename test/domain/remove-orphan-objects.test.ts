import { describe, expect, it } from 'vitest';
import { RemoveOrphanObjectsUseCase, type NewOrderFile } from '@logi/domain';
import { FakeOrderFiles, FakeStorage } from './fakes.js';

const OLD = 1_000;
const YOUNG = 9_000;
const NOW = 10_000;
const MAX_AGE_MS = 5_000;

function row(storageKey: string): NewOrderFile {
  return { directory: 'd', orderId: 1, categoryId: null, name: 'a.pdf', size: 1, contentType: 'application/pdf', sha256: 'x', storageKey, createdAt: 1 };
}

/** Storage with objects written at the given times, and rows for the paired keys. */
async function setUp(objects: Record<string, number>, paired: string[] = []) {
  const storage = new FakeStorage();
  for (const [key, at] of Object.entries(objects)) {
    storage.clock = () => at;
    storage.set(key, Buffer.from(key));
  }
  const files = new FakeOrderFiles();
  for (const key of paired) await files.insertOnce(row(key), Number.MAX_SAFE_INTEGER);
  return { storage, files };
}

describe('remove orphan objects', () => {
  it('when an old object under orders/ has no row, then it goes; an old one with a row, a young orphan and other prefixes stay', async () => {
    const { storage, files } = await setUp(
      {
        'orders/d/1/orphan': OLD,
        'orders/d/1/paired': OLD,
        'orders/d/2/young-orphan': YOUNG,
        'staging/old': OLD,
        'pdf/old.pdf': OLD,
      },
      ['orders/d/1/paired'],
    );
    const removed: string[] = [];
    const reconcile = new RemoveOrphanObjectsUseCase({ storage, files, maxAgeMs: MAX_AGE_MS, now: () => NOW, onRemoved: (key) => removed.push(key) });
    expect(await reconcile.execute()).toEqual({ checked: 2, removed: 1, walkedToEnd: true });
    expect(removed).toEqual(['orders/d/1/orphan']);
    expect([...storage.objects.keys()].sort()).toEqual(['orders/d/1/paired', 'orders/d/2/young-orphan', 'pdf/old.pdf', 'staging/old']);
    expect(storage.listings.every((listing) => listing.prefix === 'orders/')).toBe(true);
  });

  it('when an object is exactly as old as the bound, then it stays: only what is older goes', async () => {
    const { storage, files } = await setUp({ 'orders/d/1/at-the-bound': NOW - MAX_AGE_MS, 'orders/d/1/older': NOW - MAX_AGE_MS - 1 });
    await new RemoveOrphanObjectsUseCase({ storage, files, maxAgeMs: MAX_AGE_MS, now: () => NOW }).execute();
    expect([...storage.objects.keys()]).toEqual(['orders/d/1/at-the-bound']);
  });

  it('when there are more objects than one run looks at, then each run does a bounded part and the next goes on where it stopped', async () => {
    const objects: Record<string, number> = {};
    for (let i = 0; i < 7; i++) objects[`orders/d/${i}/orphan`] = OLD;
    objects['orders/d/3/paired'] = OLD;
    const { storage, files } = await setUp(objects, ['orders/d/3/paired']);
    const reconcile = new RemoveOrphanObjectsUseCase({ storage, files, maxAgeMs: MAX_AGE_MS, pageSize: 2, maxPages: 2, now: () => NOW });

    // Keys in order: 0/orphan 1/orphan | 2/orphan 3/orphan | 3/paired 4/orphan | 5/orphan 6/orphan
    expect(await reconcile.execute()).toEqual({ checked: 4, removed: 4, walkedToEnd: false });
    expect(storage.listings.map((l) => [l.limit, l.after])).toEqual([
      [2, null],
      [2, 'orders/d/1/orphan'],
    ]);
    expect(await reconcile.execute()).toEqual({ checked: 4, removed: 3, walkedToEnd: true });
    expect(storage.listings.slice(2).map((l) => l.after)).toEqual(['orders/d/3/orphan', 'orders/d/4/orphan']);
    expect([...storage.objects.keys()]).toEqual(['orders/d/3/paired']);

    // After the end, the walk starts over from the beginning.
    await reconcile.execute();
    expect(storage.listings.at(-1)?.after).toBeNull();
  });

  it('when a page holds only young objects, then the walk still moves past them', async () => {
    const { storage, files } = await setUp({ 'orders/a/1/young': YOUNG, 'orders/a/2/young': YOUNG, 'orders/b/1/orphan': OLD });
    const reconcile = new RemoveOrphanObjectsUseCase({ storage, files, maxAgeMs: MAX_AGE_MS, pageSize: 2, maxPages: 1, now: () => NOW });
    expect(await reconcile.execute()).toEqual({ checked: 0, removed: 0, walkedToEnd: false });
    expect(await reconcile.execute()).toEqual({ checked: 1, removed: 1, walkedToEnd: true });
    expect([...storage.objects.keys()].sort()).toEqual(['orders/a/1/young', 'orders/a/2/young']);
  });

  it('when the rows cannot be read, then nothing is removed, the run fails, and the next run checks the same page', async () => {
    const { storage, files } = await setUp({ 'orders/d/1/paired': OLD, 'orders/d/2/orphan': OLD }, ['orders/d/1/paired']);
    const reconcile = new RemoveOrphanObjectsUseCase({ storage, files, maxAgeMs: MAX_AGE_MS, pageSize: 1, maxPages: 5, now: () => NOW });
    files.unavailable = new Error('Database unavailable');
    await expect(reconcile.execute()).rejects.toThrow('Database unavailable');
    expect(storage.objects.size).toBe(2);
    files.unavailable = null;
    expect(await reconcile.execute()).toEqual({ checked: 2, removed: 1, walkedToEnd: true });
    expect(storage.listings.map((l) => l.after)).toEqual([null, null, 'orders/d/1/paired']);
    expect([...storage.objects.keys()]).toEqual(['orders/d/1/paired']);
  });

  it('when a removal fails, then the run fails, what was removed before is reported, and the next run repeats the page', async () => {
    const { storage, files } = await setUp({ 'orders/d/1/a': OLD, 'orders/d/1/b': OLD });
    const removed: string[] = [];
    const reconcile = new RemoveOrphanObjectsUseCase({ storage, files, maxAgeMs: MAX_AGE_MS, now: () => NOW, onRemoved: (key) => removed.push(key) });
    const deleteOnce = storage.delete.bind(storage);
    let calls = 0;
    storage.delete = async (key: string) => {
      calls += 1;
      if (calls === 2) throw new Error('Storage unavailable: connection refused');
      await deleteOnce(key);
    };
    await expect(reconcile.execute()).rejects.toThrow('Storage unavailable');
    expect(removed).toEqual(['orders/d/1/a']);
    expect(await reconcile.execute()).toEqual({ checked: 1, removed: 1, walkedToEnd: true });
    expect(storage.listings.map((l) => l.after)).toEqual([null, null]);
    expect(storage.objects.size).toBe(0);
  });
});
