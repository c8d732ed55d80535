import { describe, expect, it } from 'vitest';
import {
  AttachFilesUseCase,
  filesCountedByQuota,
  NoFilesUploadedError,
  quotaDay,
  StoreOrderFileUseCase,
  type ReceivedFile,
  type UploadQuotaPort,
} from '@logi/domain';
import { FakeCategories, FakeOrderFiles, FakeOrders, FakeQueue, FakeStorage } from './fakes.js';

/** Usage per directory and day, in memory. */
class FakeQuota implements UploadQuotaPort {
  readonly usage = new Map<string, number>();
  async reserve(directory: string, day: string, bytes: number, limit: number) {
    const used = this.usage.get(`${directory} ${day}`) ?? 0;
    if (used + bytes > limit) return false;
    this.usage.set(`${directory} ${day}`, used + bytes);
    return true;
  }
  async release(directory: string, day: string, bytes: number) {
    this.usage.set(`${directory} ${day}`, Math.max(0, (this.usage.get(`${directory} ${day}`) ?? 0) - bytes));
  }
  async used(directory: string, day: string) {
    return this.usage.get(`${directory} ${day}`) ?? 0;
  }
  async removeBefore(day: string) {
    const old = [...this.usage.keys()].filter((key) => key.split(' ')[1]! < day);
    for (const key of old) this.usage.delete(key);
    return old.length;
  }
}

function setup(bytesPerDay: number) {
  const storage = new FakeStorage();
  const files = new FakeOrderFiles();
  const usage = new FakeQuota();
  const store = new StoreOrderFileUseCase({ files, storage, now: () => 1_800_000_000_000 });
  let ids = 0;
  const useCase = new AttachFilesUseCase({
    orders: new FakeOrders([{ id: 3001, directory: 'baltic', nr: 'BH/1', ownnr: 'PO' }]),
    categories: new FakeCategories([]),
    files,
    storage,
    queue: new FakeQueue(() => ({ 'store-order-file': (p) => store.execute(p) })),
    maxFiles: 5,
    jobTimeoutMs: 1000,
    newId: () => `id-${++ids}`,
    now: () => 1_800_000_000_000,
    quota: { usage, bytesPerDay, timeZone: 'Europe/Warsaw', clock: { now: () => new Date('2026-03-14T23:30:00Z') } },
  });
  const attach = (parts: ReceivedFile[]) =>
    useCase.execute({ directory: 'baltic', orderId: 3001, requestId: 'r', receive: async () => ({ files: parts, categoryId: undefined, errors: {} }) });
  return { attach, usage, storage };
}

const part = (index: number, size: number, sha = String(index)): ReceivedFile => ({
  index,
  name: `scan-${index}.pdf`,
  size,
  contentType: 'application/pdf',
  sha256: sha.padStart(64, 'a'),
  localPath: `/tmp/part-${index}`,
});

describe('the daily upload quota', () => {
  it('when a file would pass the quota, then it fails with the reason and the files around it that fit are stored, counted in request order', async () => {
    const { attach, usage } = setup(1000);
    const result = await attach([part(0, 600), part(1, 500), part(2, 400)]);
    expect(result.uploaded.map((f) => f.name)).toEqual(['scan-0.pdf', 'scan-2.pdf']);
    expect(result.failed).toEqual([{ name: 'scan-1.pdf', error: 'Daily upload quota exceeded.' }]);
    // The day is Warsaw's: 23:30 UTC on the 14th is the 15th there.
    expect(usage.usage).toEqual(new Map([['baltic 2026-03-15', 1000]]));
  });

  it('when no file fits, then NoFilesUploadedError with each in failed', async () => {
    const { attach } = setup(100);
    const error = await attach([part(0, 101)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoFilesUploadedError);
    expect((error as NoFilesUploadedError).details.failed).toEqual([{ name: 'scan-0.pdf', error: 'Daily upload quota exceeded.' }]);
  });

  it('when a file could not be stored, then its bytes are given back', async () => {
    const { attach, usage, storage } = setup(1000);
    storage.failing = true;
    await expect(attach([part(0, 600)])).rejects.toBeInstanceOf(NoFilesUploadedError);
    expect(usage.usage.get('baltic 2026-03-15')).toBe(0);
    storage.failing = false;
    expect((await attach([part(0, 1000)])).uploaded).toHaveLength(1);
  });

  it('when parts repeat bytes, then the bytes count once; a repeat of a refused part is refused too', async () => {
    const { attach, usage } = setup(1000);
    const result = await attach([part(0, 600, 'x'), part(1, 600, 'x'), part(2, 700, 'y'), part(3, 700, 'y')]);
    expect(result.uploaded.map((f) => [f.name, f.duplicateOf !== undefined])).toEqual([
      ['scan-0.pdf', false],
      ['scan-1.pdf', true],
    ]);
    expect(result.failed.map((f) => f.name)).toEqual(['scan-2.pdf', 'scan-3.pdf']);
    expect(usage.usage.get('baltic 2026-03-15')).toBe(600);
    // Bytes the order already has count nothing either.
    expect((await attach([part(4, 600, 'x')])).uploaded[0]?.duplicateOf).toBeDefined();
    expect(usage.usage.get('baltic 2026-03-15')).toBe(600);
  });

  it('when the quota is 0, then nothing is counted', async () => {
    const { attach, usage } = setup(0);
    expect((await attach([part(0, 5_000_000)])).failed).toEqual([]);
    expect(usage.usage.size).toBe(0);
  });

  it('quotaDay and filesCountedByQuota: the calendar day in the time zone; new bytes only, first of each', () => {
    expect(quotaDay(new Date('2026-03-14T22:59:59Z'), 'Europe/Warsaw')).toBe('2026-03-14');
    expect(quotaDay(new Date('2026-03-14T23:00:00Z'), 'Europe/Warsaw')).toBe('2026-03-15');
    expect(quotaDay(new Date('2026-03-15T03:00:00Z'), 'America/New_York')).toBe('2026-03-14');
    expect(filesCountedByQuota([part(0, 1, 'a'), part(1, 1, 'b'), part(2, 1, 'a')], new Set(['b'.padStart(64, 'a')])).map((f) => f.index)).toEqual([0]);
  });
});
