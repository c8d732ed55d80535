import { describe, expect, it } from 'vitest';
import { SweepPdfCacheUseCase, pdfCacheKey, type PdfCacheRemoval } from '@logi/domain';
import { FakeStorage } from './fakes.js';

const HOUR = 3_600_000;
/** A cache key whose version starts with `prefix` (hex), padded to 64 digits. */
const key = (prefix: string) => `pdf-cache/${prefix.padEnd(64, '0')}.pdf`;

/** Writes each key at the given clock time (Unix ms). */
function storageWith(objects: Array<[string, number]>): FakeStorage {
  const storage = new FakeStorage();
  for (const [name, at] of objects) {
    storage.clock = () => at;
    storage.set(name, Buffer.from('%PDF'));
  }
  return storage;
}

const cached = (storage: FakeStorage) => [...storage.objects.keys()].filter((k) => k.startsWith('pdf-cache/')).sort();

describe('sweep the PDF cache', () => {
  it('when cached PDFs are older than the age bound, then they go, and young ones and other prefixes stay', async () => {
    const storage = storageWith([
      [key('1'), 0],
      [key('2'), 5 * HOUR],
      [key('3'), 9 * HOUR],
      ['pdf/old.pdf', 0],
      ['orders/d/1/x', 0],
    ]);
    const removed: Array<[string, PdfCacheRemoval]> = [];
    const sweep = new SweepPdfCacheUseCase({ storage, maxAgeMs: 6 * HOUR, maxObjects: 100, now: () => 10 * HOUR, onRemoved: (k, r) => removed.push([k, r]) });
    expect(await sweep.execute()).toEqual({ looked: 3, expired: 1, overCount: 0, walkedToEnd: true });
    expect(cached(storage)).toEqual([key('2'), key('3')]);
    expect(storage.objects.has('pdf/old.pdf') && storage.objects.has('orders/d/1/x')).toBe(true);
    expect(removed).toEqual([[key('1'), 'age']]);
  });

  it('when there are more cached PDFs than the count bound, then the oldest go until the bound is met', async () => {
    // Written in another order than their keys, so age and not key order decides.
    const storage = storageWith([
      [key('a'), 4],
      [key('b'), 1],
      [key('c'), 5],
      [key('d'), 2],
      [key('e'), 3],
    ]);
    const removed: Array<[string, PdfCacheRemoval]> = [];
    const sweep = new SweepPdfCacheUseCase({ storage, maxAgeMs: HOUR, maxObjects: 3, now: () => 10, onRemoved: (k, r) => removed.push([k, r]) });
    expect(await sweep.execute()).toMatchObject({ looked: 5, expired: 0, overCount: 2 });
    expect(cached(storage)).toEqual([key('a'), key('c'), key('e')]);
    expect(removed).toEqual([
      [key('b'), 'count'],
      [key('d'), 'count'],
    ]);
    expect(await sweep.execute()).toMatchObject({ looked: 3, overCount: 0 });
  });

  it('when one directory fills the cache past the bound, then its own oldest PDFs go and another directory keeps its share', async () => {
    const version = (n: number) => n.toString(16).padStart(64, '0');
    // The ordinary directory's five PDFs are the oldest; the abusive one wrote twenty after them.
    const storage = storageWith([
      ...Array.from({ length: 5 }, (_, i) => [pdfCacheKey(version(i), 'ORDINARY'), i] as [string, number]),
      ...Array.from({ length: 20 }, (_, i) => [pdfCacheKey(version(100 + i), 'BULKY'), 10 + i] as [string, number]),
    ]);
    const sweep = new SweepPdfCacheUseCase({ storage, maxAgeMs: HOUR, maxObjects: 15, now: () => 100 });
    expect(await sweep.execute()).toMatchObject({ looked: 25, expired: 0, overCount: 10 });
    const left = cached(storage);
    expect(left.filter((k) => k.endsWith(`.${Buffer.from('ORDINARY').toString('hex')}.pdf`))).toHaveLength(5);
    // BULKY lost its ten oldest.
    expect(left.filter((k) => k.endsWith(`.${Buffer.from('BULKY').toString('hex')}.pdf`)).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => pdfCacheKey(version(110 + i), 'BULKY')).sort(),
    );
  });

  it('when two directories both hold more than a fair share, then both come down to the same count', async () => {
    const version = (n: number) => n.toString(16).padStart(64, '0');
    const storage = storageWith([
      ...Array.from({ length: 12 }, (_, i) => [pdfCacheKey(version(i), 'A'), i] as [string, number]),
      ...Array.from({ length: 8 }, (_, i) => [pdfCacheKey(version(100 + i), 'B'), i] as [string, number]),
      [pdfCacheKey(version(500), 'C'), 0] as [string, number],
    ]);
    const sweep = new SweepPdfCacheUseCase({ storage, maxAgeMs: HOUR, maxObjects: 11, now: () => 100 });
    expect(await sweep.execute()).toMatchObject({ looked: 21, overCount: 10 });
    const owners = cached(storage).map((k) => Buffer.from(k.split('.')[1]!, 'hex').toString());
    expect(owners.filter((o) => o === 'A')).toHaveLength(5);
    expect(owners.filter((o) => o === 'B')).toHaveLength(5);
    expect(owners.filter((o) => o === 'C')).toHaveLength(1);
  });

  it('when one run may remove only a few, then it stops there and the next run goes on', async () => {
    const storage = storageWith(Array.from({ length: 6 }, (_, i) => [key(String(i)), 0] as [string, number]));
    const sweep = new SweepPdfCacheUseCase({ storage, maxAgeMs: HOUR, maxObjects: 100, maxDeletes: 4, now: () => 2 * HOUR });
    expect((await sweep.execute()).expired).toBe(4);
    expect((await sweep.execute()).expired).toBe(2);
    expect(cached(storage)).toEqual([]);
  });

  it('when the cache is larger than one run looks at, then the run lists a bounded number of pages and keeps its place', async () => {
    // 16 objects spread evenly over the key space (versions 0..., 1..., ... f...).
    const storage = storageWith(Array.from({ length: 16 }, (_, i) => [key(i.toString(16)), i] as [string, number]));
    const sweep = new SweepPdfCacheUseCase({ storage, maxAgeMs: HOUR, maxObjects: 8, pageSize: 4, maxPages: 1, now: () => 100 });
    const first = await sweep.execute();
    // The first quarter of the key space (4 of 16) may keep its share of the bound, about 2 of its 4: the oldest go.
    expect(first).toMatchObject({ looked: 4, expired: 0, walkedToEnd: false });
    expect(first.overCount).toBeGreaterThanOrEqual(2);
    expect(first.overCount).toBeLessThanOrEqual(3);
    expect(cached(storage)).not.toContain(key('0'));
    expect(cached(storage)).not.toContain(key('1'));
    expect(cached(storage)).toContain(key('3'));
    expect(storage.listings.map((l) => l.after)).toEqual([null]);
    await sweep.execute();
    expect(storage.listings.at(-1)?.after).toBe(key('3'));
    await sweep.execute();
    const last = await sweep.execute();
    expect(last.walkedToEnd).toBe(true);
    expect(storage.listings).toHaveLength(4);
    // Each stretch kept about its share: the whole is at the bound or just under it.
    expect(cached(storage).length).toBeLessThanOrEqual(8);
    expect(cached(storage).length).toBeGreaterThanOrEqual(5);
    // The newest of all (written last) is kept.
    expect(cached(storage)).toContain(key('f'));
  });

  it('when the bounds are zero (clearing the cache), then every cached PDF goes', async () => {
    const storage = storageWith([
      [key('1'), 0],
      [key('2'), 10],
    ]);
    const sweep = new SweepPdfCacheUseCase({ storage, maxAgeMs: 0, maxObjects: 0, now: () => 10 });
    expect(await sweep.execute()).toMatchObject({ expired: 1, overCount: 1 });
    expect(cached(storage)).toEqual([]);
  });

  it('when storage does not answer, then the run fails and removes nothing', async () => {
    const storage = storageWith([[key('1'), 0]]);
    storage.listObjects = async () => {
      throw new Error('Storage unavailable: connect ECONNREFUSED');
    };
    const sweep = new SweepPdfCacheUseCase({ storage, maxAgeMs: 1, maxObjects: 0, now: () => 10 });
    await expect(sweep.execute()).rejects.toThrow(/Storage unavailable/);
    expect(cached(storage)).toEqual([key('1')]);
  });
});
