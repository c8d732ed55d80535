import { mkdtemp, rm, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalFileStorage } from '@logi/adapters';
import { SweepPdfCacheUseCase } from '@logi/domain';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 20, 12);
const key = (digit: string) => `pdf-cache/${digit.repeat(64)}.pdf`;

let root: string;
let storage: LocalFileStorage;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'logi-pdf-cache-'));
  storage = new LocalFileStorage(root);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Stores `key` and sets its modification time to `hoursAgo` before NOW. */
async function cachedAt(name: string, hoursAgo: number): Promise<void> {
  await storage.putBuffer(name, Buffer.from('%PDF'), 'application/pdf');
  const at = new Date(NOW - hoursAgo * HOUR);
  await utimes(path.join(root, ...name.split('/')), at, at);
}

describe('LocalFileStorage and the PDF cache sweep', () => {
  it('when the cache is listed, then each object comes with its write time, in key order, in pages', async () => {
    await cachedAt(key('b'), 2);
    await cachedAt(key('a'), 1);
    await cachedAt('pdf/other.pdf', 5);
    const first = await storage.listObjects('pdf-cache/', { limit: 1, after: null });
    expect(first).toEqual({ objects: [{ key: key('a'), writtenAt: new Date(NOW - HOUR) }], next: key('a') });
    const second = await storage.listObjects('pdf-cache/', { limit: 1, after: first.next });
    expect(second).toEqual({ objects: [{ key: key('b'), writtenAt: new Date(NOW - 2 * HOUR) }], next: null });
  });

  it('when cached PDFs pass the age and count bounds on a controlled clock, then the expired and then the oldest go', async () => {
    await cachedAt(key('1'), 100);
    await cachedAt(key('2'), 30);
    await cachedAt(key('3'), 20);
    await cachedAt(key('4'), 10);
    await cachedAt(key('5'), 1);
    await cachedAt('pdf/handover.pdf', 100);
    const sweep = new SweepPdfCacheUseCase({ storage, maxAgeMs: 48 * HOUR, maxObjects: 2, now: () => NOW });
    expect(await sweep.execute()).toEqual({ looked: 5, expired: 1, overCount: 2, walkedToEnd: true });
    const left = await storage.listObjects('pdf-cache/', { limit: 100, after: null });
    expect(left.objects.map((o) => o.key)).toEqual([key('4'), key('5')]);
    expect(await storage.exists('pdf/handover.pdf')).toBe(true);
    // Later on the same clock's terms, the rest expires too.
    const later = new SweepPdfCacheUseCase({ storage, maxAgeMs: 48 * HOUR, maxObjects: 2, now: () => NOW + 48 * HOUR });
    expect(await later.execute()).toMatchObject({ expired: 2, overCount: 0 });
  });
});
