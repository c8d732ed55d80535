import { describe, expect, it } from 'vitest';
import {
  AttachFilesUseCase,
  MAX_FILE_BYTES,
  NoFilesUploadedError,
  OrderNotFoundError,
  ServiceUnavailableError,
  StoreOrderFileUseCase,
  ValidationError,
  baseFileName,
  parseCategoryId,
  LATE_JOB_ERROR,
  type ReceivedFile,
  type ReceivedUpload,
} from '@logi/domain';
import { FakeCategories, FakeOrderFiles, FakeOrders, FakeQueue, FakeStorage, storeJob } from './fakes.js';

function setup() {
  const orders = new FakeOrders([{ id: 3001, directory: 'baltic', nr: 'BH/1', ownnr: 'PO' }]);
  const categories = new FakeCategories([{ id: 1, name: 'CMR', visibleCustomer: 1 }]);
  const storage = new FakeStorage();
  const files = new FakeOrderFiles();
  const store = new StoreOrderFileUseCase({ files, storage, now: () => 1_800_000_000_000 });
  const queue = new FakeQueue(() => ({ 'store-order-file': (p) => store.execute(p) }));
  let ids = 0;
  const useCase = new AttachFilesUseCase({
    orders,
    categories,
    files,
    storage,
    queue,
    maxFiles: 3,
    jobTimeoutMs: 1000,
    newId: () => `id-${++ids}`,
    now: () => 1_800_000_000_000,
  });
  return { useCase, storage, files, queue };
}

const file = (index: number, overrides: Partial<ReceivedFile> = {}): ReceivedFile => ({
  index,
  name: `scan-${index}.pdf`,
  size: 100,
  contentType: 'application/pdf',
  // Different bytes per part: identical ones are duplicates (see attach-files-duplicates.test.ts).
  sha256: String(index).padStart(64, 'a'),
  localPath: `/tmp/part-${index}`,
  ...overrides,
});

const upload = (files: ReceivedFile[], categoryId?: string): ReceivedUpload => ({ files, categoryId, errors: {} });

describe('attach files to an order', () => {
  it('when the order does not exist, then 404 comes before the body is read', async () => {
    const { useCase } = setup();
    let read = false;
    const receive = async () => {
      read = true;
      return upload([]);
    };
    await expect(useCase.execute({ directory: 'baltic', orderId: 1, requestId: 'r', receive })).rejects.toBeInstanceOf(OrderNotFoundError);
    await expect(useCase.execute({ directory: 'alpine', orderId: 3001, requestId: 'r', receive })).rejects.toBeInstanceOf(OrderNotFoundError);
    expect(read).toBe(false);
  });

  it('when files are valid, then each is stored as one object plus one row', async () => {
    const { useCase, storage, files } = setup();
    const result = await useCase.execute({ directory: 'baltic', orderId: 3001, requestId: 'r', receive: async () => upload([file(0), file(1)], '1') });
    expect(result).toEqual({
      message: 'Files uploaded',
      orderId: 3001,
      uploaded: [
        { id: 1, name: 'scan-0.pdf', categoryId: 1 },
        { id: 2, name: 'scan-1.pdf', categoryId: 1 },
      ],
      failed: [],
    });
    expect(files.rows.map((r) => r.storageKey).sort()).toEqual(['orders/baltic/3001/id-1', 'orders/baltic/3001/id-2']);
    expect([...storage.objects.keys()].sort()).toEqual(['orders/baltic/3001/id-1', 'orders/baltic/3001/id-2']);
    expect(files.rows[0]).toMatchObject({ directory: 'baltic', orderId: 3001, size: 100, contentType: 'application/pdf', createdAt: 1_800_000_000 });
  });

  it.each([
    ['no file part', upload([]), 'The files field is required.', 'files'],
    ['an empty file', upload([file(0), file(1, { size: 0 })]), 'The files.1 field must not be an empty file.', 'files.1'],
    ['a file over 10 MiB', upload([file(0, { size: MAX_FILE_BYTES + 1 })]), 'The files.0 field must not be greater than 10240 kilobytes.', 'files.0'],
    ['too many files', upload([file(0), file(1), file(2), file(3)]), 'The files field must not have more than 3 items.', 'files'],
    ['an unknown category', upload([file(0)], '99'), 'The selected category_id is invalid.', 'category_id'],
    ['a category that is not a number', upload([file(0)], 'abc'), 'The category_id field must be an integer.', 'category_id'],
  ])('when %s, then 422 names the field and nothing is stored', async (_name, body, message, field) => {
    const { useCase, storage, files } = setup();
    const error = await useCase.execute({ directory: 'baltic', orderId: 3001, requestId: 'r', receive: async () => body }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toBe(message);
    expect((error as ValidationError).errors).toHaveProperty([field]);
    expect(storage.objects.size).toBe(0);
    expect(files.rows).toHaveLength(0);
  });

  it('when a file is exactly 10 MiB, then it is accepted', async () => {
    const { useCase } = setup();
    const result = await useCase.execute({
      directory: 'baltic',
      orderId: 3001,
      requestId: 'r',
      receive: async () => upload([file(0, { size: MAX_FILE_BYTES })]),
    });
    expect(result.uploaded).toHaveLength(1);
  });

  it.each([undefined, '', 'null', ' null '])('when category_id is %j, then files have no category', async (categoryId) => {
    const { useCase } = setup();
    const result = await useCase.execute({ directory: 'baltic', orderId: 3001, requestId: 'r', receive: async () => upload([file(0)], categoryId) });
    expect(result.uploaded[0]!.categoryId).toBeNull();
  });

  it('when storage is down, then every file fails with a readable error and the answer is 422 with the payload', async () => {
    const { useCase, storage, files } = setup();
    storage.failing = true;
    const error = await useCase
      .execute({ directory: 'baltic', orderId: 3001, requestId: 'r', receive: async () => upload([file(0), file(1)]) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoFilesUploadedError);
    expect((error as NoFilesUploadedError).details).toEqual({
      message: 'No files were uploaded',
      orderId: 3001,
      uploaded: [],
      failed: [
        { name: 'scan-0.pdf', error: 'Storage unavailable: connection refused' },
        { name: 'scan-1.pdf', error: 'Storage unavailable: connection refused' },
      ],
    });
    expect(files.rows).toHaveLength(0);
  });

  it('when the queue does not answer, then the request is 503 at once and the object goes once its job could write nothing more', async () => {
    const { useCase, storage, queue } = setup();
    queue.unavailable = new ServiceUnavailableError('queue down');
    await expect(useCase.execute({ directory: 'baltic', orderId: 3001, requestId: 'r', receive: async () => upload([file(0)]) })).rejects.toBeInstanceOf(
      ServiceUnavailableError,
    );
    // The job may still run until its deadline (JOB_TIMEOUT_MS 1 s here): until then the object it would commit stays.
    expect([...storage.objects.keys()]).toEqual(['orders/baltic/3001/id-1']);
    await expect.poll(() => storage.objects.size, { timeout: 10_000, interval: 50 }).toBe(0);
  });

  it('when the queue does not answer but the job commits before its deadline, then the object stays with its row', async () => {
    const { useCase, storage, queue, files } = setup();
    queue.unavailable = new ServiceUnavailableError('queue down');
    await expect(useCase.execute({ directory: 'baltic', orderId: 3001, requestId: 'r', receive: async () => upload([file(0)]) })).rejects.toBeInstanceOf(
      ServiceUnavailableError,
    );
    // The queue took the job after all, and a worker stored it in time.
    await new StoreOrderFileUseCase({ files, storage, now: () => 1_800_000_000_000 }).execute(
      storeJob({ directory: 'baltic', orderId: 3001, size: 100, storageKey: 'orders/baltic/3001/id-1', deadline: 1_800_000_000_000 + 900 }),
    );
    expect(files.rows.map((row) => row.storageKey)).toEqual(['orders/baltic/3001/id-1']);
    // Past the deadline the API's clean-up looks for the row (the job looked once, first) and leaves the object alone.
    await expect.poll(() => files.lookups, { timeout: 10_000, interval: 50 }).toEqual(['orders/baltic/3001/id-1', 'orders/baltic/3001/id-1']);
    expect([...storage.objects.keys()]).toEqual(['orders/baltic/3001/id-1']);
  });

  it('when the store job answers an error (storage failing as it checks the object), then the file fails and its object goes', async () => {
    const { useCase, storage, files } = setup();
    storage.stat = async () => {
      throw new Error('Storage unavailable: ECONNRESET');
    };
    const error = await useCase
      .execute({ directory: 'baltic', orderId: 3001, requestId: 'r', receive: async () => upload([file(0)]) })
      .catch((e: unknown) => e);
    expect((error as NoFilesUploadedError).details.failed).toEqual([{ name: 'scan-0.pdf', error: 'Storage unavailable: ECONNRESET' }]);
    expect(files.rows).toEqual([]);
    await expect.poll(() => storage.objects.size, { timeout: 10_000, interval: 50 }).toBe(0);
  });

  it('when the store job fails unexpectedly, then the file is listed as failed without internals', async () => {
    const { useCase, queue } = setup();
    queue.unavailable = new Error('SQLITE_CONSTRAINT: secret details');
    const error = await useCase
      .execute({ directory: 'baltic', orderId: 3001, requestId: 'r', receive: async () => upload([file(0)]) })
      .catch((e: unknown) => e);
    expect((error as NoFilesUploadedError).details.failed).toEqual([{ name: 'scan-0.pdf', error: 'The file could not be stored.' }]);
  });
});

describe('store order file job', () => {
  it('when it runs twice, then there is one row and one object', async () => {
    const storage = new FakeStorage();
    const files = new FakeOrderFiles();
    storage.objects.set('orders/d/1/a', Buffer.from('x'));
    const job = new StoreOrderFileUseCase({ files, storage });
    const payload = storeJob();
    const first = await job.execute(payload);
    const second = await job.execute(payload);
    expect(first).toEqual(second);
    expect(files.rows).toHaveLength(1);
    expect(storage.objects.has('orders/d/1/a')).toBe(true);
  });

  it('when the row cannot be written, then the object is removed again', async () => {
    const storage = new FakeStorage();
    storage.objects.set('final/a', Buffer.from('x'));
    const files = new FakeOrderFiles();
    files.insertOnce = async () => {
      throw new Error('db down');
    };
    const job = new StoreOrderFileUseCase({ files, storage });
    await expect(job.execute(storeJob({ storageKey: 'final/a' }))).rejects.toThrow('db down');
    expect(storage.objects.has('final/a')).toBe(false);
  });

  it('when the object is not there (a retry after its own clean-up), then it answers an error and writes no row', async () => {
    const files = new FakeOrderFiles();
    const result = await new StoreOrderFileUseCase({ files, storage: new FakeStorage() }).execute(storeJob());
    expect(result).toEqual({ error: 'File not found in storage: orders/d/1/a' });
    expect(files.rows).toEqual([]);
  });

  it('when the object holds another size than the upload, then it answers an error and writes no row', async () => {
    const storage = new FakeStorage();
    storage.objects.set('orders/d/1/a', Buffer.from('xy'));
    const files = new FakeOrderFiles();
    expect(await new StoreOrderFileUseCase({ files, storage }).execute(storeJob())).toEqual({ error: 'The stored object holds 2 bytes, not 1.' });
    expect(files.rows).toEqual([]);
  });

  it('when an older API names a staging key, then the bytes are copied to the file key first, as that release did', async () => {
    const storage = new FakeStorage();
    storage.objects.set('staging/a', Buffer.from('x'));
    const files = new FakeOrderFiles();
    expect(await new StoreOrderFileUseCase({ files, storage }).execute(storeJob({ stagingKey: 'staging/a' }))).toEqual({ fileId: 1 });
    expect(storage.objects.get('orders/d/1/a')).toEqual(Buffer.from('x'));
    expect(files.rows.map((row) => row.storageKey)).toEqual(['orders/d/1/a']);
  });
});

describe('store order file job past its deadline', () => {
  const payload = (deadline: number) => storeJob({ deadline });

  it('when the caller has stopped waiting before the job starts, then nothing is stored', async () => {
    const storage = new FakeStorage();
    storage.objects.set('orders/d/1/a', Buffer.from('x'));
    const files = new FakeOrderFiles();
    const job = new StoreOrderFileUseCase({ files, storage, now: () => 2_000 });
    expect(await job.execute(payload(1_000))).toEqual({ error: LATE_JOB_ERROR });
    expect(files.rows).toEqual([]);
    expect(storage.objects.has('orders/d/1/a')).toBe(false);
  });

  it('when the deadline passes while the object is checked, then the object is removed and no row is written', async () => {
    const storage = new FakeStorage();
    storage.objects.set('orders/d/1/a', Buffer.from('x'));
    const files = new FakeOrderFiles();
    let clock = 500;
    const stat = storage.stat.bind(storage);
    storage.stat = async (key) => {
      const found = await stat(key);
      clock = 1_500;
      return found;
    };
    const job = new StoreOrderFileUseCase({ files, storage, now: () => clock });
    expect(await job.execute(payload(1_000))).toEqual({ error: LATE_JOB_ERROR });
    expect(files.rows).toEqual([]);
    expect(storage.objects.has('orders/d/1/a')).toBe(false);
  });

  it('when the upload passes the job a deadline, then it is now plus the job timeout less a tenth of it (a second at most), for the answer to travel back', async () => {
    const { storage } = setup();
    const deadlines: number[] = [];
    const queue = new FakeQueue(() => ({
      'store-order-file': async (p) => {
        deadlines.push(p.deadline);
        return { fileId: 1 };
      },
    }));
    const useCase = new AttachFilesUseCase({
      orders: new FakeOrders([{ id: 1, directory: 'd', nr: 'N', ownnr: 'O' }]),
      categories: new FakeCategories(),
      files: new FakeOrderFiles(),
      storage,
      queue,
      maxFiles: 3,
      jobTimeoutMs: 1000,
      newId: () => 'x',
      now: () => 10_000,
    });
    await useCase.execute({ directory: 'd', orderId: 1, requestId: 'r', receive: async () => upload([file(0)]) });
    expect(deadlines).toEqual([10_900]);
  });
});

describe('file names', () => {
  it.each([
    ['../../etc/passwd', 'passwd'],
    ['C:\\Users\\me\\scan.pdf', 'scan.pdf'],
    ['zażółć gęślą.pdf', 'zażółć gęślą.pdf'],
    ['bad\u0000na\u001fme\u007f.pdf', 'badname.pdf'],
    ['..', 'file'],
    ['.', 'file'],
    ['', 'file'],
    ['/', 'file'],
    ['scans/', 'file'],
    ['scans\\', 'file'],
    ['ctl\u0001name.pdf', 'ctlname.pdf'],
    // A right-to-left override shows this as "invoiceexe.txt".
    ['invoice\u202Etxt.exe', 'invoicetxt.exe'],
    ['\u202Aa\u202Bb\u202Cc\u202Dd\u202Ee\u2066f\u2067g\u2068h\u2069i\u200Ej\u200Fk\u061Cl.pdf', 'abcdefghijkl.pdf'],
    ['in\u200Bvo\u200Cice\u200D\u2060.pdf\uFEFF', 'invoice.pdf'],
    ['\uFEFFscan.pdf', 'scan.pdf'],
    ['two\u2028lines\u2029.pdf', 'twolines.pdf'],
    ['.\u200B.', 'file'],
    ['\u200B\u202E', 'file'],
    // Decomposed (as macOS sends names) becomes composed: one code point per letter.
    ['Cafe\u0301 Zu\u0308rich.pdf', 'Caf\u00e9 Z\u00fcrich.pdf'],
    ['\u0041\u030A\u212B.pdf', '\u00c5\u00c5.pdf'],
  ])('when the client sends %j, then the name is %j', (sent, kept) => {
    expect(baseFileName(sent)).toBe(kept);
  });

  it('when a name is long, then 255 code points are kept, counted after composing', () => {
    expect(baseFileName(`${'e\u0301'.repeat(300)}`)).toBe('\u00e9'.repeat(255));
  });
});

describe('category_id', () => {
  it.each([undefined, '', ' ', 'null', 'NULL', 'Null', ' nUlL '])('when %j is sent, then there is no category', (raw) => {
    expect(parseCategoryId(raw)).toEqual({ id: null });
  });

  it.each(['0', '-1', '-0', '000'])('when %j is sent, then it names no category and is invalid', (raw) => {
    expect(parseCategoryId(raw)).toEqual({ error: 'The selected category_id is invalid.' });
  });

  it.each(['1x', '1.5', '+1', 'none', '1e3', '-'])('when %j is sent, then it is not an integer', (raw) => {
    expect(parseCategoryId(raw)).toEqual({ error: 'The category_id field must be an integer.' });
  });

  it('when a positive whole number is sent, then it is the id', () => {
    expect(parseCategoryId(' 7 ')).toEqual({ id: 7 });
  });
});
