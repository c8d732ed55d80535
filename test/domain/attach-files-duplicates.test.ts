import { describe, expect, it } from 'vitest';
import { AttachFilesUseCase, NoFilesUploadedError, StoreOrderFileUseCase, type ReceivedFile, type ReceivedUpload } from '@logi/domain';
import { FakeCategories, FakeOrderFiles, FakeOrders, FakeQueue, FakeStorage } from './fakes.js';

const NOW = 1_800_000_000_000;

function setup() {
  const orders = new FakeOrders([
    { id: 3001, directory: 'baltic', nr: 'BH/1', ownnr: 'PO' },
    { id: 3002, directory: 'baltic', nr: 'BH/2', ownnr: 'PO' },
  ]);
  const categories = new FakeCategories([
    { id: 1, name: 'CMR', visibleCustomer: 1 },
    { id: 2, name: 'Invoice', visibleCustomer: 0 },
  ]);
  const storage = new FakeStorage();
  const files = new FakeOrderFiles();
  const store = new StoreOrderFileUseCase({ files, storage, now: () => NOW });
  const queue = new FakeQueue(() => ({ 'store-order-file': (p) => store.execute(p) }));
  let ids = 0;
  const useCase = new AttachFilesUseCase({
    orders,
    categories,
    files,
    storage,
    queue,
    maxFiles: 5,
    jobTimeoutMs: 1000,
    newId: () => `id-${++ids}`,
    now: () => NOW,
  });
  const send = (body: ReceivedUpload, orderId = 3001) => useCase.execute({ directory: 'baltic', orderId, requestId: 'r', receive: async () => body });
  return { send, storage, files, queue };
}

const SAME = 'd'.repeat(64);
const file = (index: number, sha256: string, name = `scan-${index}.pdf`): ReceivedFile => ({
  index,
  name,
  size: 100,
  contentType: 'application/pdf',
  sha256,
  localPath: `/tmp/part-${index}`,
});
const upload = (files: ReceivedFile[], categoryId?: string): ReceivedUpload => ({ files, categoryId, errors: {} });

describe('attach files whose bytes the order already has', () => {
  it('when a file with the same bytes is already attached to the order, then it names the existing file and nothing is stored or staged', async () => {
    const { send, storage, files, queue } = setup();
    const first = await send(upload([file(0, SAME, 'cmr.pdf')], '1'));
    const again = await send(upload([file(0, SAME, 'cmr-again.pdf'), file(1, 'e'.repeat(64))], '2'));
    const existing = first.uploaded[0]!.id;
    expect(again.message).toBe('Files uploaded (1 already attached)');
    expect(again.uploaded[0]).toEqual({ id: existing, name: 'cmr-again.pdf', categoryId: 1, duplicateOf: existing });
    expect(again.uploaded[1]).toMatchObject({ name: 'scan-1.pdf', categoryId: 2 });
    expect(again.uploaded[1]!.duplicateOf).toBeUndefined();
    expect(files.rows).toHaveLength(2);
    expect([...storage.objects.keys()].filter((key) => !key.startsWith('orders/'))).toEqual([]);
    expect(storage.objects.size).toBe(2);
    expect(queue.jobs).toHaveLength(2);
  });

  it('when two parts of one request have the same bytes, then the first is stored and the second names it', async () => {
    const { send, storage, files } = setup();
    const answer = await send(upload([file(0, SAME, 'a.pdf'), file(1, SAME, 'b.pdf')]));
    const stored = answer.uploaded[0]!;
    expect(stored.duplicateOf).toBeUndefined();
    expect(answer.uploaded[1]).toEqual({ id: stored.id, name: 'b.pdf', categoryId: null, duplicateOf: stored.id });
    expect(answer.message).toBe('Files uploaded (1 already attached)');
    expect(files.rows).toHaveLength(1);
    expect(storage.objects.size).toBe(1);
  });

  it('when the same bytes go to another order, then they are stored as usual', async () => {
    const { send, files } = setup();
    await send(upload([file(0, SAME)]));
    const other = await send(upload([file(0, SAME)]), 3002);
    expect(other.uploaded[0]!.duplicateOf).toBeUndefined();
    expect(other.message).toBe('Files uploaded');
    expect(files.rows.map((r) => r.orderId)).toEqual([3001, 3002]);
  });

  it('when the first part of two identical ones cannot be stored, then both fail and nothing is left', async () => {
    const { send, storage, files } = setup();
    storage.failing = true;
    const error = await send(upload([file(0, SAME, 'a.pdf'), file(1, SAME, 'b.pdf')])).catch((e: unknown) => e);
    expect((error as NoFilesUploadedError).details.failed.map((f) => f.name)).toEqual(['a.pdf', 'b.pdf']);
    expect(files.rows).toHaveLength(0);
    expect(storage.objects.size).toBe(0);
  });
});
