import { describe, expect, it } from 'vitest';
import { AttachFilesUseCase, JobOutcomeUnknownError, LATE_JOB_ERROR, ServiceUnavailableError, StoreOrderFileUseCase, type ReceivedFile } from '@logi/domain';
import { FakeCategories, FakeOrderFiles, FakeOrders, FakeQueue, FakeStorage, storeJob } from './fakes.js';

/** Rows and objects come in pairs, on every path of the store job and of the upload that waits for it. */

const job = (deadline: number) => storeJob({ deadline });

function storeSetup(clock: () => number) {
  const storage = new FakeStorage();
  // The API wrote the object at the file's key before the job (ADR 0046).
  storage.objects.set('orders/d/1/a', Buffer.from('x'));
  const files = new FakeOrderFiles();
  files.clock = clock;
  return { storage, files, store: new StoreOrderFileUseCase({ files, storage, now: clock }) };
}

describe('store order file job: a row never points at a missing object', () => {
  it('when the insert committed but its answer was lost, then the file is stored: its row is the answer and the object stays', async () => {
    const { storage, files, store } = storeSetup(() => 1_000);
    const insert = files.insertOnce.bind(files);
    files.insertOnce = async (file, deadline) => {
      await insert(file, deadline);
      throw new Error('Connection lost: The server closed the connection.');
    };
    expect(await store.execute(job(5_000))).toEqual({ fileId: files.rows[0]!.id });
    expect(files.rows).toHaveLength(1);
    expect(storage.objects.has('orders/d/1/a')).toBe(true);
  });

  it('when the insert fails and no row was written, then the object is removed and the error reaches the queue (to try again)', async () => {
    const { storage, files, store } = storeSetup(() => 1_000);
    files.insertOnce = async () => {
      throw new Error('db down');
    };
    await expect(store.execute(job(5_000))).rejects.toThrow('db down');
    expect(storage.objects.has('orders/d/1/a')).toBe(false);
  });

  it('when the insert fails and the row cannot even be looked up, then the object is kept rather than risk a row without it', async () => {
    const { storage, files, store } = storeSetup(() => 1_000);
    let down = false;
    files.insertOnce = async () => {
      down = true;
      throw new Error('db down');
    };
    const find = files.findByStorageKey.bind(files);
    files.findByStorageKey = async (key) => {
      if (down) throw new Error('db down');
      return find(key);
    };
    await expect(store.execute(job(5_000))).rejects.toThrow('db down');
    expect(storage.objects.has('orders/d/1/a')).toBe(true);
  });

  it('when the deadline passes before the row commits, then no row is written and the object is removed', async () => {
    let clock = 1_000;
    const { storage, files, store } = storeSetup(() => clock);
    const insert = files.insertOnce.bind(files);
    files.insertOnce = async (file, deadline) => {
      clock = 6_000;
      return insert(file, deadline);
    };
    expect(await store.execute(job(5_000))).toEqual({ error: LATE_JOB_ERROR });
    expect(files.rows).toEqual([]);
    expect(storage.objects.has('orders/d/1/a')).toBe(false);
  });

  it('when a late retry finds the object and no row, then it removes the object', async () => {
    const { storage, store } = storeSetup(() => 9_000);
    expect(await store.execute(job(5_000))).toEqual({ error: LATE_JOB_ERROR });
    expect(storage.objects.has('orders/d/1/a')).toBe(false);
  });

  it('when another run wrote the row in time while this one checked the object past the deadline, then the object stays and that row is the answer', async () => {
    let clock = 1_000;
    const { storage, files, store } = storeSetup(() => clock);
    const stat = storage.stat.bind(storage);
    storage.stat = async (key) => {
      const found = await stat(key);
      await files.insertOnce(
        { directory: 'd', orderId: 1, categoryId: null, name: 'a.pdf', size: 1, contentType: 'application/pdf', sha256: 'x', storageKey: key, createdAt: 1 },
        5_000,
      );
      clock = 6_000;
      return found;
    };
    expect(await store.execute(job(5_000))).toEqual({ fileId: files.rows[0]!.id });
    expect(storage.objects.has('orders/d/1/a')).toBe(true);
  });
});

describe('store order file job: a first run commits at once, any other run checks first', () => {
  const firstRun = { firstRun: true };

  /** Counts the object's HEADs and copies, and the row's look-ups. */
  function countedSetup(clock: () => number) {
    const setup = storeSetup(clock);
    const asked = { stat: 0, copy: 0 };
    const stat = setup.storage.stat.bind(setup.storage);
    setup.storage.stat = async (key) => {
      asked.stat += 1;
      return stat(key);
    };
    const copy = setup.storage.copy.bind(setup.storage);
    setup.storage.copy = async (from, to) => {
      asked.copy += 1;
      return copy(from, to);
    };
    return { ...setup, asked };
  }

  it('when a job the API sent after its PUT runs the first time, then its row is committed without a look-up or a HEAD', async () => {
    const { files, store, asked } = countedSetup(() => 1_000);
    expect(await store.execute(job(5_000), firstRun)).toEqual({ fileId: files.rows[0]!.id });
    expect(files.rows.map((row) => row.storageKey)).toEqual(['orders/d/1/a']);
    expect(files.lookups).toEqual([]);
    expect(asked.stat).toBe(0);
  });

  it('when a job is run again (a retry, or taken over from a stalled worker), then it looks for its row and checks the object first', async () => {
    const { files, store, asked } = countedSetup(() => 1_000);
    expect(await store.execute(job(5_000), { firstRun: false })).toEqual({ fileId: files.rows[0]!.id });
    expect(files.lookups).toEqual(['orders/d/1/a']);
    expect(asked.stat).toBe(1);
  });

  it('when the queue does not say which run it is, then the job checks as a retry would', async () => {
    const { files, store, asked } = countedSetup(() => 1_000);
    await store.execute(job(5_000));
    expect(files.lookups).toEqual(['orders/d/1/a']);
    expect(asked.stat).toBe(1);
  });

  it("when the first run's insert fails and removes the object, then the retry finds no object and writes no row", async () => {
    const { storage, files, store } = countedSetup(() => 1_000);
    const insert = files.insertOnce.bind(files);
    files.insertOnce = async () => {
      throw new Error('db down');
    };
    await expect(store.execute(job(5_000), firstRun)).rejects.toThrow('db down');
    expect(storage.objects.has('orders/d/1/a')).toBe(false);
    files.insertOnce = insert;
    const retried = await store.execute(job(5_000), { firstRun: false });
    expect(retried).toHaveProperty('error');
    expect(files.rows).toEqual([]);
  });

  it("when an older API's job names a staging key, then even its first run copies the bytes and checks the object", async () => {
    const { storage, files, store, asked } = countedSetup(() => 1_000);
    storage.objects.delete('orders/d/1/a');
    storage.objects.set('staging/5f0c7a38-3d3e-4b5e-9a59-2f7a8f0b3c11', Buffer.from('x'));
    const result = await store.execute(storeJob({ deadline: 5_000, stagingKey: 'staging/5f0c7a38-3d3e-4b5e-9a59-2f7a8f0b3c11' }), firstRun);
    expect(result).toEqual({ fileId: files.rows[0]!.id });
    expect(asked).toEqual({ copy: 1, stat: 1 });
    expect(storage.objects.get('orders/d/1/a')).toEqual(Buffer.from('x'));
  });

  it('when a first run starts past its deadline, then it writes no row and removes the object', async () => {
    const { storage, files, store } = countedSetup(() => 9_000);
    expect(await store.execute(job(5_000), firstRun)).toEqual({ error: LATE_JOB_ERROR });
    expect(files.rows).toEqual([]);
    expect(storage.objects.has('orders/d/1/a')).toBe(false);
  });
});

describe('store order file job: its stages, timed for the operator', () => {
  /** A clock that moves on by 2 ms for a row's look-up, 7 for the object's HEAD and 5 for the row's insert. */
  function timedStore(onStage: (stage: string, ms: number) => void) {
    let clock = 1_000;
    const { storage, files } = storeSetup(() => clock);
    const find = files.findByStorageKey.bind(files);
    files.findByStorageKey = async (key) => {
      clock += 2;
      return find(key);
    };
    const stat = storage.stat.bind(storage);
    storage.stat = async (key) => {
      clock += 7;
      return stat(key);
    };
    const insert = files.insertOnce.bind(files);
    files.insertOnce = async (file, deadline) => {
      clock += 5;
      return insert(file, deadline);
    };
    return { files, store: new StoreOrderFileUseCase({ files, storage, now: () => clock, onStage }) };
  }

  it('when a run that checks first stores a file, then the look-up, the check of its object and the commit are each told once, with their time', async () => {
    const told: Array<[string, number]> = [];
    const { files, store } = timedStore((stage, ms) => told.push([stage, ms]));
    expect(await store.execute(job(5_000), { firstRun: false })).toEqual({ fileId: files.rows[0]!.id });
    expect(told).toEqual([
      ['lookup', 2],
      ['check', 7],
      ['commit', 5],
    ]);
  });

  it("when a job's first run stores a file, then only the commit is told, with its time", async () => {
    const told: Array<[string, number]> = [];
    const { files, store } = timedStore((stage, ms) => told.push([stage, ms]));
    expect(await store.execute(job(5_000), { firstRun: true })).toEqual({ fileId: files.rows[0]!.id });
    expect(told).toEqual([['commit', 5]]);
  });

  it('when a retry finds its row already there, then only the look-up is told', async () => {
    const told: string[] = [];
    const { files, store } = timedStore((stage) => told.push(stage));
    await store.execute(job(5_000));
    told.length = 0;
    expect(await store.execute(job(5_000))).toEqual({ fileId: files.rows[0]!.id });
    expect(told).toEqual(['lookup']);
  });
});

describe('an upload whose jobs end differently', () => {
  const received = (index: number): ReceivedFile => ({
    index,
    name: `scan-${index}.pdf`,
    size: 100,
    contentType: 'application/pdf',
    sha256: String(index).padStart(64, 'a'),
    localPath: `/tmp/part-${index}`,
  });

  function uploadSetup(unavailableNames: string[], options: { lost?: 'stored' | 'not stored'; jobTimeoutMs?: number } = {}) {
    const storage = new FakeStorage();
    const files = new FakeOrderFiles();
    const store = new StoreOrderFileUseCase({ files, storage });
    const queue = new FakeQueue(() => ({
      'store-order-file': async (p) => {
        if (unavailableNames.includes(p.name)) {
          if (!options.lost) throw new ServiceUnavailableError('job timed out');
          // The queue loses the job; it runs on, and stores the file (or not) after the caller was told.
          if (options.lost === 'stored') setTimeout(() => void store.execute(p), 50);
          throw new JobOutcomeUnknownError('job queue unavailable: Redis connection lost');
        }
        return store.execute(p);
      },
    }));
    let ids = 0;
    const useCase = new AttachFilesUseCase({
      orders: new FakeOrders([{ id: 3001, directory: 'baltic', nr: 'BH/1', ownnr: 'PO' }]),
      categories: new FakeCategories(),
      files,
      storage,
      queue,
      maxFiles: 5,
      jobTimeoutMs: options.jobTimeoutMs ?? 30_000,
      newId: () => `id-${++ids}`,
    });
    const run = () =>
      useCase.execute({
        directory: 'baltic',
        orderId: 3001,
        requestId: 'r',
        receive: async () => ({ files: [received(0), received(1), received(2)], categoryId: undefined, errors: {} }),
      });
    return { run, files, storage };
  }

  it('when one file is not stored in time but the others are, then 201 lists them and names the late one as failed, to send again', async () => {
    const { run, files, storage } = uploadSetup(['scan-1.pdf'], { jobTimeoutMs: 300 });
    const payload = await run();
    expect(payload.message).toBe('2 of 3 files uploaded');
    expect(payload.uploaded.map((f) => f.name)).toEqual(['scan-0.pdf', 'scan-2.pdf']);
    expect(payload.failed).toEqual([{ name: 'scan-1.pdf', error: 'The file could not be stored in time; nothing was kept. Send it again.' }]);
    expect(files.rows.map((r) => r.name)).toEqual(['scan-0.pdf', 'scan-2.pdf']);
    // The late file's object stays while its job may still commit (its deadline), then goes: objects and rows pair up.
    await expect.poll(() => [...storage.objects.keys()].sort(), { timeout: 10_000, interval: 50 }).toEqual(files.rows.map((r) => r.storageKey).sort());
  });

  it('when no file is stored and one was not answered in time, then the request is 503, since a retry may succeed', async () => {
    const { run, files } = uploadSetup(['scan-0.pdf', 'scan-1.pdf', 'scan-2.pdf']);
    await expect(run()).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(files.rows).toEqual([]);
  });

  it("when the queue loses a job that then stores its file, then the upload waits for the job's deadline and reports the file as uploaded", async () => {
    const { run, files, storage } = uploadSetup(['scan-1.pdf'], { lost: 'stored', jobTimeoutMs: 300 });
    const payload = await run();
    expect(payload.uploaded.map((f) => f.name)).toEqual(['scan-0.pdf', 'scan-1.pdf', 'scan-2.pdf']);
    expect(payload.failed).toEqual([]);
    expect(files.rows).toHaveLength(3);
    expect([...storage.objects.keys()].sort()).toEqual(files.rows.map((r) => r.storageKey).sort());
  });

  it('when the queue loses every job and none stores its file, then, past the deadline, the answer is 503 and nothing was stored', async () => {
    const { run, files, storage } = uploadSetup(['scan-0.pdf', 'scan-1.pdf', 'scan-2.pdf'], { lost: 'not stored', jobTimeoutMs: 300 });
    await expect(run()).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(files.rows).toEqual([]);
    // The answer came after the deadline, once no job could commit: the objects the API wrote went first.
    expect([...storage.objects.keys()]).toEqual([]);
  });
});
