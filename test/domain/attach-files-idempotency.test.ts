import { describe, expect, it } from 'vitest';
import {
  AttachFilesUseCase,
  IDEMPOTENCY_KEEP_MS,
  IdempotencyKeyInUseError,
  ServiceUnavailableError,
  StoreOrderFileUseCase,
  ValidationError,
  type ReceivedFile,
  type ReceivedUpload,
} from '@logi/domain';
import { FakeCategories, FakeIdempotencyStore, FakeOrderFiles, FakeOrders, FakeQueue, FakeStorage } from './fakes.js';

const NOW = 1_800_000_000_000;

function setup() {
  const orders = new FakeOrders([
    { id: 3001, directory: 'baltic', nr: 'BH/1', ownnr: 'PO' },
    { id: 3002, directory: 'baltic', nr: 'BH/2', ownnr: 'PO' },
    { id: 4001, directory: 'alpine', nr: 'AL/1', ownnr: 'PO' },
  ]);
  const categories = new FakeCategories([
    { id: 1, name: 'CMR', visibleCustomer: 1 },
    { id: 2, name: 'Invoice', visibleCustomer: 0 },
  ]);
  const storage = new FakeStorage();
  const files = new FakeOrderFiles();
  const idempotency = new FakeIdempotencyStore();
  let clock = NOW;
  idempotency.clock = () => clock;
  const store = new StoreOrderFileUseCase({ files, storage, now: () => NOW });
  /** Set to hold every store job until it resolves. */
  const held: { gate: Promise<void> | null } = { gate: null };
  const queue = new FakeQueue(() => ({
    'store-order-file': async (p) => {
      if (held.gate) await held.gate;
      return store.execute(p);
    },
  }));
  let ids = 0;
  const useCase = new AttachFilesUseCase({
    orders,
    categories,
    files,
    storage,
    queue,
    idempotency,
    maxFiles: 3,
    jobTimeoutMs: 1000,
    newId: () => `id-${++ids}`,
    now: () => NOW,
  });
  return { useCase, storage, files, queue, idempotency, held, advance: (ms: number) => (clock += ms) };
}

const file = (index: number, overrides: Partial<ReceivedFile> = {}): ReceivedFile => ({
  index,
  name: `scan-${index}.pdf`,
  size: 100,
  contentType: 'application/pdf',
  sha256: String(index).padStart(64, 'c'),
  localPath: `/tmp/part-${index}`,
  ...overrides,
});
const upload = (files: ReceivedFile[], categoryId?: string): ReceivedUpload => ({ files, categoryId, errors: {} });
const input = (key: string | undefined, body: ReceivedUpload, orderId = 3001, directory = 'baltic') => ({
  directory,
  orderId,
  requestId: 'r',
  idempotencyKey: key,
  receive: async () => body,
});

describe('attach files with an Idempotency-Key', () => {
  it('when the same request is sent again with the key, then the first answer comes back marked replayed and nothing is stored twice', async () => {
    const { useCase, storage, files, queue } = setup();
    const first = await useCase.execute(input('k-1', upload([file(0), file(1)], '1')));
    const again = await useCase.execute(input('k-1', upload([file(0), file(1)], '1')));
    expect(first.replayed).toBeUndefined();
    expect(again).toEqual({ ...first, replayed: true });
    expect(files.rows).toHaveLength(2);
    expect(storage.objects.size).toBe(2);
    expect(queue.jobs).toHaveLength(2);
  });

  it.each([
    ['another order', upload([file(0)], '1'), 3002],
    ['other bytes', upload([file(0, { sha256: 'f'.repeat(64) })], '1'), 3001],
    ['another file name', upload([file(0, { name: 'other.pdf' })], '1'), 3001],
    ['another category', upload([file(0)], '2'), 3001],
    ['no category', upload([file(0)]), 3001],
    ['one more file', upload([file(0), file(1)], '1'), 3001],
  ])('when the key comes back with %s, then 422 names the Idempotency-Key header and nothing more is stored', async (_name, body, orderId) => {
    const { useCase, files } = setup();
    await useCase.execute(input('k-2', upload([file(0)], '1')));
    const error = await useCase.execute(input('k-2', body, orderId)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toBe('The Idempotency-Key header was already used for a different request.');
    expect(Object.keys((error as ValidationError).errors)).toEqual(['Idempotency-Key']);
    expect(files.rows).toHaveLength(1);
  });

  it('when the first request is still running, then a retry with the key is told to come back (409 with Retry-After) and stores nothing', async () => {
    const { useCase, files, held, queue } = setup();
    let open = () => undefined as void;
    held.gate = new Promise<void>((resolve) => (open = resolve));
    const first = useCase.execute(input('k-3', upload([file(0)])));
    await expect.poll(() => queue.jobs.length).toBe(1);
    const retry = await useCase.execute(input('k-3', upload([file(0)]))).catch((e: unknown) => e);
    expect(retry).toBeInstanceOf(IdempotencyKeyInUseError);
    expect((retry as IdempotencyKeyInUseError).retryAfterSeconds).toBe(1);
    open();
    expect((await first).uploaded).toHaveLength(1);
    expect((await useCase.execute(input('k-3', upload([file(0)])))).replayed).toBe(true);
    expect(files.rows).toHaveLength(1);
  });

  it('when nothing could be stored (storage down), then the answer is not kept and a retry with the key runs again', async () => {
    const { useCase, storage, files } = setup();
    storage.failing = true;
    await expect(useCase.execute(input('k-4', upload([file(0)])))).rejects.toMatchObject({ code: 'NO_FILES_UPLOADED' });
    storage.failing = false;
    const retry = await useCase.execute(input('k-4', upload([file(0)])));
    expect(retry.replayed).toBeUndefined();
    expect(retry.uploaded).toHaveLength(1);
    expect(files.rows).toHaveLength(1);
  });

  it('when the queue is down (503), then the key is let go and a retry runs again', async () => {
    const { useCase, queue, idempotency } = setup();
    queue.unavailable = new ServiceUnavailableError('queue down');
    await expect(useCase.execute(input('k-5', upload([file(0)])))).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(idempotency.records.size).toBe(0);
    queue.unavailable = null;
    expect((await useCase.execute(input('k-5', upload([file(0)])))).uploaded).toHaveLength(1);
  });

  it.each([
    ['256 characters', 'k'.repeat(256), 'The Idempotency-Key header must not be greater than 255 characters.'],
    ['a space', 'two words', 'The Idempotency-Key header must contain only visible ASCII characters.'],
    ['a non-ASCII letter', 'klíč', 'The Idempotency-Key header must contain only visible ASCII characters.'],
    ['a control character', 'a\tb', 'The Idempotency-Key header must contain only visible ASCII characters.'],
  ])('when the key has %s, then 422 names the header, nothing is stored and the key is not taken', async (_name, key, message) => {
    const { useCase, storage, files, idempotency } = setup();
    const error = await useCase.execute(input(key, upload([file(0)]))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).errors).toEqual({ 'Idempotency-Key': [message] });
    expect(storage.objects.size + files.rows.length + idempotency.records.size).toBe(0);
  });

  it('when the key is 255 visible ASCII characters, then it is accepted', async () => {
    const { useCase } = setup();
    const key = '!~'.repeat(127) + 'x';
    expect((await useCase.execute(input(key, upload([file(0)])))).uploaded).toHaveLength(1);
  });

  it('when another directory sends the same key, then it is a key of its own', async () => {
    const { useCase, files } = setup();
    await useCase.execute(input('shared', upload([file(0)])));
    const other = await useCase.execute(input('shared', upload([file(1)]), 4001, 'alpine'));
    expect(other.replayed).toBeUndefined();
    expect(files.rows.map((r) => r.directory)).toEqual(['baltic', 'alpine']);
  });

  it('when 24 hours have passed, then the key is forgotten: the request runs again and finds its files already attached', async () => {
    const { useCase, files, advance } = setup();
    const first = await useCase.execute(input('k-6', upload([file(0)])));
    advance(IDEMPOTENCY_KEEP_MS - 1);
    expect((await useCase.execute(input('k-6', upload([file(0)])))).replayed).toBe(true);
    advance(1);
    const later = await useCase.execute(input('k-6', upload([file(0)])));
    expect(later.replayed).toBeUndefined();
    expect(later.uploaded).toEqual([{ id: first.uploaded[0]!.id, name: 'scan-0.pdf', categoryId: null, duplicateOf: first.uploaded[0]!.id }]);
    expect(files.rows).toHaveLength(1);
  });

  it('when no key is sent, then nothing is kept', async () => {
    const { useCase, idempotency } = setup();
    await useCase.execute(input(undefined, upload([file(0)])));
    expect(idempotency.records.size).toBe(0);
  });
});
