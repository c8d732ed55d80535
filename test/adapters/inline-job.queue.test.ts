import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InlineJobQueue, isBulkWork } from '@logi/adapters';
import { InvoiceNotFoundError, ServiceUnavailableError, type JobHandlers, type JobPayloads } from '@logi/domain';

const pdfPayload = (invoiceId: number): JobPayloads['render-invoice-pdf'] => ({
  directory: 'ACME',
  invoiceId,
  deadline: Date.UTC(2100, 0, 1),
  lang: 'en',
  duplicate: false,
  pdfKey: `pdf/${invoiceId}.pdf`,
  requestId: 'req-1',
});

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function handlersWith(render: JobHandlers['render-invoice-pdf']): JobHandlers {
  return {
    'render-invoice-pdf': render,
    'store-order-file': async () => ({ fileId: 1 }),
  };
}

describe('InlineJobQueue', () => {
  it('when a job runs, then the handler gets the payload and the caller its result', async () => {
    const seen: unknown[] = [];
    const queue = new InlineJobQueue(() => handlersWith(async (p) => (seen.push(p), { pdfKey: p.pdfKey, bytes: 42, invoiceNr: 'FV/1' })), { concurrency: 1 });
    await expect(queue.runAndWait('render-invoice-pdf', pdfPayload(7), { jobId: 'j1', timeoutMs: 1000 })).resolves.toEqual({
      pdfKey: 'pdf/7.pdf',
      bytes: 42,
      invoiceNr: 'FV/1',
    });
    expect(seen).toEqual([pdfPayload(7)]);
    await queue.close();
  });

  it('when the handlers are built after the queue, then the queue uses them (no wiring cycle)', async () => {
    let handlers: JobHandlers | undefined;
    const queue = new InlineJobQueue(() => handlers!, { concurrency: 1 });
    handlers = handlersWith(async (p) => ({ pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' }));
    await expect(queue.runAndWait('store-order-file', {} as JobPayloads['store-order-file'], { jobId: 's', timeoutMs: 1000 })).resolves.toEqual({ fileId: 1 });
    await queue.close();
  });

  it('when the handler throws a domain error, then the same error reaches the caller', async () => {
    const thrown = new InvoiceNotFoundError();
    const queue = new InlineJobQueue(() => handlersWith(async () => Promise.reject(thrown)), { concurrency: 1 });
    const error = await queue.runAndWait('render-invoice-pdf', pdfPayload(1), { jobId: 'e', timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(error).toBe(thrown);
    await queue.close();
  });

  it('when the handler meets an outage (SQLite busy, a refused connection), then the caller gets ServiceUnavailableError; any other error stays as it was', async () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const bug = new TypeError('x is undefined');
    let next: Error = busy;
    const queue = new InlineJobQueue(() => handlersWith(async () => Promise.reject(next)), { concurrency: 1 });
    expect(await queue.runAndWait('render-invoice-pdf', pdfPayload(1), { jobId: 'busy', timeoutMs: 1000 }).catch((e: unknown) => e)).toBeInstanceOf(
      ServiceUnavailableError,
    );
    next = bug;
    expect(await queue.runAndWait('render-invoice-pdf', pdfPayload(1), { jobId: 'bug', timeoutMs: 1000 }).catch((e: unknown) => e)).toBe(bug);
    await queue.close();
  });

  it('when the job takes longer than the timeout, then the caller gets ServiceUnavailableError in time and the job still finishes', async () => {
    const release = deferred();
    const finished = deferred();
    const queue = new InlineJobQueue(
      () => handlersWith(async (p) => (await release.promise, finished.resolve(), { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' })),
      { concurrency: 1 },
    );
    const started = Date.now();
    const error = await queue.runAndWait('render-invoice-pdf', pdfPayload(1), { jobId: 't', timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as ServiceUnavailableError).reason).toBe('job timed out');
    expect(Date.now() - started).toBeLessThan(1000);
    release.resolve();
    await finished.promise;
    await queue.close();
  });

  it('when the same jobId is sent while it runs, then both callers share one execution', async () => {
    const release = deferred();
    let runs = 0;
    const queue = new InlineJobQueue(() => handlersWith(async (p) => (runs++, await release.promise, { pdfKey: p.pdfKey, bytes: runs, invoiceNr: 'FV/1' })), {
      concurrency: 4,
    });
    const first = queue.runAndWait('render-invoice-pdf', pdfPayload(1), { jobId: 'same', timeoutMs: 1000 });
    const second = queue.runAndWait('render-invoice-pdf', pdfPayload(1), { jobId: 'same', timeoutMs: 1000 });
    release.resolve();
    await expect(Promise.all([first, second])).resolves.toEqual([
      { pdfKey: 'pdf/1.pdf', bytes: 1, invoiceNr: 'FV/1' },
      { pdfKey: 'pdf/1.pdf', bytes: 1, invoiceNr: 'FV/1' },
    ]);
    expect(runs).toBe(1);
    await queue.close();
  });

  it('when a render hands its PDF over, then its callers answer with it while the job goes on, and close waits for the job', async () => {
    const pdf = Buffer.from('%PDF-1.7');
    const writeCache = deferred();
    const ended: string[] = [];
    const queue = new InlineJobQueue(
      () =>
        handlersWith(async (p, run) => {
          const result = { pdfKey: `pdf-cache/ACME/${p.invoiceId}.pdf`, bytes: pdf.length, invoiceNr: 'FV/1', version: 'v1' };
          await run!.handOverPdf!(result, pdf);
          await writeCache.promise;
          ended.push('job');
          return result;
        }),
      { concurrency: 1 },
    );
    const answer = await queue.runAndWait('render-invoice-pdf', pdfPayload(3), { jobId: 'early', timeoutMs: 1000 });
    expect(answer).toEqual({ pdfKey: 'pdf-cache/ACME/3.pdf', bytes: pdf.length, invoiceNr: 'FV/1', version: 'v1', pdf });
    expect(ended).toEqual([]);
    const closed = queue.close().then(() => ended.push('closed'));
    writeCache.resolve();
    await closed;
    expect(ended).toEqual(['job', 'closed']);
  });

  it('when a render that handed its PDF over cannot keep it in the cache, then the queue tells onCacheWriteFailed', async () => {
    const failed: Array<{ jobId: string; cacheError: string }> = [];
    const told = deferred();
    const queue = new InlineJobQueue(
      () =>
        handlersWith(async (p, run) => {
          await run!.handOverPdf!({ pdfKey: 'pdf-cache/ACME/4.pdf', bytes: 8, invoiceNr: 'FV/1' }, Buffer.from('%PDF-1.7'));
          return { pdfKey: p.pdfKey, bytes: 8, invoiceNr: 'FV/1', cacheError: 'Storage unavailable: quota' };
        }),
      { concurrency: 1, onCacheWriteFailed: (f) => (failed.push(f), told.resolve()) },
    );
    await queue.runAndWait('render-invoice-pdf', pdfPayload(4), { jobId: 'lost-write', timeoutMs: 1000 });
    await told.promise;
    expect(failed).toEqual([{ jobId: 'lost-write', cacheError: 'Storage unavailable: quota' }]);
    await queue.close();
  });

  it('when a store job runs, then it is given no hand-over', async () => {
    const runs: unknown[] = [];
    const queue = new InlineJobQueue(
      () => ({
        'render-invoice-pdf': async () => ({ pdfKey: 'x', bytes: 1, invoiceNr: 'FV/1' }),
        'store-order-file': async (_p, run) => (runs.push(run), { fileId: 1 }),
      }),
      { concurrency: 1 },
    );
    await queue.runAndWait('store-order-file', {} as JobPayloads['store-order-file'], { jobId: 's', timeoutMs: 1000 });
    expect(runs).toEqual([{ firstRun: true }]);
    await queue.close();
  });

  it('when more jobs come than the concurrency, then at most that many run at once and all finish', async () => {
    let active = 0;
    let peak = 0;
    const gates = Array.from({ length: 5 }, () => deferred());
    const queue = new InlineJobQueue(
      () =>
        handlersWith(async (p) => {
          active++;
          peak = Math.max(peak, active);
          await gates[p.invoiceId]!.promise;
          active--;
          return { pdfKey: p.pdfKey, bytes: p.invoiceId, invoiceNr: 'FV/1' };
        }),
      { concurrency: 2 },
    );
    const all = Promise.all(gates.map((_, i) => queue.runAndWait('render-invoice-pdf', pdfPayload(i), { jobId: `c${i}`, timeoutMs: 5000 })));
    for (const gate of gates) gate.resolve();
    const results = await all;
    expect(results.map((r) => r.bytes)).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
    await queue.close();
  });

  it('when every render slot is busy, then file stores still run at once, up to four times the concurrency, as on a worker', async () => {
    const renderGate = deferred();
    const storeGate = deferred();
    let storing = 0;
    let peakStoring = 0;
    const queue = new InlineJobQueue(
      () => ({
        'render-invoice-pdf': async (p) => {
          await renderGate.promise;
          return { pdfKey: p.pdfKey, bytes: 0, invoiceNr: 'FV/1' };
        },
        'store-order-file': async () => {
          storing++;
          peakStoring = Math.max(peakStoring, storing);
          await storeGate.promise;
          storing--;
          return { fileId: 1 };
        },
      }),
      { concurrency: 2 },
    );
    const renders = [1, 2, 3].map((i) => queue.runAndWait('render-invoice-pdf', pdfPayload(i), { jobId: `r${i}`, timeoutMs: 5000 }));
    const storePayload = (i: number): JobPayloads['store-order-file'] => ({
      directory: 'ACME',
      orderId: 1,
      categoryId: null,
      name: `f${i}`,
      size: 1,
      contentType: 'application/pdf',
      sha256: 'x',
      storageKey: `orders/ACME/1/${i}`,
      requestId: 'req-1',
      deadline: Date.UTC(2100, 0, 1),
    });
    const stores = Array.from({ length: 10 }, (_, i) => queue.runAndWait('store-order-file', storePayload(i), { jobId: `s${i}`, timeoutMs: 5000 }));
    await expect.poll(() => storing).toBe(8);
    storeGate.resolve();
    expect((await Promise.all(stores)).map((r) => ('fileId' in r ? r.fileId : r.error))).toEqual(Array(10).fill(1));
    expect(peakStoring).toBe(8);
    renderGate.resolve();
    expect((await Promise.all(renders)).map((r) => r.bytes)).toEqual([0, 0, 0]);
    await queue.close();
  });

  it('when a queued job times out before a slot frees, then it never runs', async () => {
    const release = deferred();
    const ran: number[] = [];
    const queue = new InlineJobQueue(
      () => handlersWith(async (p) => (ran.push(p.invoiceId), await release.promise, { pdfKey: p.pdfKey, bytes: 0, invoiceNr: 'FV/1' })),
      { concurrency: 1 },
    );
    const busy = queue.runAndWait('render-invoice-pdf', pdfPayload(1), { jobId: 'busy', timeoutMs: 5000 });
    await expect(queue.runAndWait('render-invoice-pdf', pdfPayload(2), { jobId: 'late', timeoutMs: 50 })).rejects.toBeInstanceOf(ServiceUnavailableError);
    release.resolve();
    await busy;
    await queue.close();
    expect(ran).toEqual([1]);
  });

  it('when the queue is closed, then new jobs are refused and ping fails', async () => {
    const queue = new InlineJobQueue(() => handlersWith(async (p) => ({ pdfKey: p.pdfKey, bytes: 0, invoiceNr: 'FV/1' })), { concurrency: 1 });
    await queue.ping();
    await queue.close();
    await expect(queue.ping()).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(queue.runAndWait('render-invoice-pdf', pdfPayload(1), { jobId: 'x', timeoutMs: 100 })).rejects.toBeInstanceOf(ServiceUnavailableError);
  });
});

describe('InlineJobQueue fair shares', () => {
  const payloadOf = (directory: string, invoiceId: number): JobPayloads['render-invoice-pdf'] => ({ ...pdfPayload(invoiceId), directory });

  it('when one directory queues a backlog, then a job of another directory waits behind at most one job of each busy directory', async () => {
    const started: string[] = [];
    const gate = deferred();
    const queue = new InlineJobQueue(
      () =>
        handlersWith(async (p) => {
          started.push(`${p.directory}${p.invoiceId}`);
          if (p.invoiceId === 0) await gate.promise;
          return { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' };
        }),
      { concurrency: 1 },
    );
    const run = (directory: string, invoiceId: number, bulk = false) =>
      queue.runAndWait('render-invoice-pdf', payloadOf(directory, invoiceId), { jobId: `${directory}-${invoiceId}`, timeoutMs: 10_000, bulk });
    const jobs = [run('A', 0)];
    await expect.poll(() => started).toEqual(['A0']);
    for (let i = 1; i <= 10; i++) jobs.push(run('A', i));
    for (let i = 1; i <= 10; i++) jobs.push(run('B', i));
    for (let i = 1; i <= 3; i++) jobs.push(run('X', i, true));
    jobs.push(run('C', 1));
    gate.resolve();
    await Promise.all(jobs);
    expect(started.slice(0, 6)).toEqual(['A0', 'A1', 'B1', 'C1', 'A2', 'B2']);
    // Bulk jobs (exports) start after every job a request waits for.
    expect(started.slice(-3)).toEqual(['X1', 'X2', 'X3']);
    await queue.close();
  });

  it('when a request ran just before and exports queue renders on two slots, then they hold one and a request starts at once beside them, before the bulk backlog', async () => {
    const started: string[] = [];
    const running = { bulk: 0, maxBulk: 0 };
    const gate = deferred();
    const queue = new InlineJobQueue(
      () =>
        handlersWith(async (p) => {
          const bulk = isBulkWork();
          started.push(`${p.directory}${p.invoiceId}`);
          if (bulk) running.bulk += 1;
          running.maxBulk = Math.max(running.maxBulk, running.bulk);
          // A0, the request before the export, ends at once.
          if (p.invoiceId > 0) await gate.promise;
          if (bulk) running.bulk -= 1;
          return { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' };
        }),
      { concurrency: 2 },
    );
    const run = (directory: string, invoiceId: number, bulk = false) =>
      queue.runAndWait('render-invoice-pdf', payloadOf(directory, invoiceId), { jobId: `${directory}-${invoiceId}`, timeoutMs: 10_000, bulk });
    await run('A', 0);
    const jobs = [1, 2, 3, 4].map((i) => run('X', i, true));
    await expect.poll(() => started).toEqual(['A0', 'X1']);
    jobs.push(run('A', 1));
    // The request takes the slot the exports leave free: no wait behind X2..X4.
    await expect.poll(() => started).toEqual(['A0', 'X1', 'A1']);
    gate.resolve();
    await Promise.all(jobs);
    expect(started).toEqual(['A0', 'X1', 'A1', 'X2', 'X3', 'X4']);
    expect(running.maxBulk).toBe(1);
    await queue.close();
  });

  describe('when no request ran for the hold (reserveHoldMs, ADR 0059)', () => {
    beforeEach(() => vi.useFakeTimers());
    afterEach(() => vi.useRealTimers());

    it('when exports queue renders on two slots, then they take both; a request takes the first slot one leaves, before the backlog, and a slot is kept from the exports until the hold has passed after it', async () => {
      const started: string[] = [];
      const gates = new Map<string, ReturnType<typeof deferred<void>>>();
      const gate = (name: string) => gates.get(name) ?? gates.set(name, deferred()).get(name)!;
      const queue = new InlineJobQueue(
        () =>
          handlersWith(async (p) => {
            const name = `${p.directory}${p.invoiceId}`;
            started.push(name);
            await gate(name).promise;
            return { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' };
          }),
        { concurrency: 2, reserveHoldMs: 1_000 },
      );
      const run = (directory: string, invoiceId: number, bulk = false) =>
        queue.runAndWait('render-invoice-pdf', payloadOf(directory, invoiceId), { jobId: `${directory}-${invoiceId}`, timeoutMs: 10_000, bulk });
      const jobs = [1, 2, 3, 4].map((i) => run('X', i, true));
      await vi.advanceTimersByTimeAsync(0);
      expect(started).toEqual(['X1', 'X2']);
      jobs.push(run('A', 1));
      await vi.advanceTimersByTimeAsync(0);
      expect(started).toEqual(['X1', 'X2']);
      gate('X1').resolve();
      await vi.advanceTimersByTimeAsync(0);
      expect(started).toEqual(['X1', 'X2', 'A1']);
      // The request ends: its slot stays free for the hold, then the backlog takes it.
      gate('A1').resolve();
      await vi.advanceTimersByTimeAsync(999);
      expect(started).toEqual(['X1', 'X2', 'A1']);
      await vi.advanceTimersByTimeAsync(1);
      expect(started).toEqual(['X1', 'X2', 'A1', 'X3']);
      for (const name of ['X2', 'X3', 'X4']) gate(name).resolve();
      await vi.advanceTimersByTimeAsync(0);
      await Promise.all(jobs);
      expect(started).toEqual(['X1', 'X2', 'A1', 'X3', 'X4']);
      await queue.close();
    });
  });
});
