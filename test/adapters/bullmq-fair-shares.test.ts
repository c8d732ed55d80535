import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { Queue } from 'bullmq';
import { acquirePage, BullmqJobWorker, isBulkWork, QUEUE_NAME_BY_JOB, RenderPermits } from '@logi/adapters';
import type { JobPayloads } from '@logi/domain';
import { bullmqHarness, deferred, handlers, pdfPayload, REDIS_URL } from '../support/bullmq-harness.js';

/** Fair shares between directories and the bulk queue (ADR 0036, ADR 0053), on the real Redis. */
const harness = bullmqHarness();
const { prefix, logger, opened, queue, worker, ready, admin } = harness;

describe('BullmqJobQueue fair shares between directories', () => {
  const payloadOf = (directory: string, invoiceId: number): JobPayloads['render-invoice-pdf'] => ({ ...pdfPayload(invoiceId), directory });

  it('when one directory queues a backlog, then a job of another waits behind at most one job of each busy directory, and bulk jobs wait on their own queue in their own fair order', async () => {
    const q = queue();
    await ready(q);
    const inspect = new Queue(QUEUE_NAME_BY_JOB['render-invoice-pdf'], { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    const inspectBulk = new Queue('pdf-bulk', { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    opened.push(inspect, inspectBulk);
    const jobs: Array<Promise<unknown>> = [];
    const run = (directory: string, invoiceId: number, bulk = false) =>
      jobs.push(
        q.runAndWait('render-invoice-pdf', payloadOf(directory, invoiceId), {
          jobId: `fair-${directory}-${invoiceId}-${randomUUID()}`,
          timeoutMs: 30_000,
          bulk,
        }),
      );
    // Added in this order with no worker running: A's backlog, then B's, then exports of X and Y, then one job of C.
    const queued = async (count: number, bulk = 0) => {
      await expect.poll(() => inspect.getPrioritizedCount(), { timeout: 10_000 }).toBe(count);
      await expect.poll(() => inspectBulk.getPrioritizedCount(), { timeout: 10_000 }).toBe(bulk);
    };
    for (let i = 1; i <= 8; i++) run('A', i);
    await queued(8);
    for (let i = 1; i <= 8; i++) run('B', i);
    await queued(16);
    for (let i = 1; i <= 2; i++) run('X', i, true);
    await queued(16, 2);
    run('Y', 1, true);
    await queued(16, 3);
    run('C', 1);
    await queued(17, 3);

    const started: string[] = [];
    const render = handlers(async (p) => (started.push(`${p.directory}${p.invoiceId}`), { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' }));
    const interactiveWorker = new BullmqJobWorker({
      redis: REDIS_URL,
      prefix,
      concurrency: 1,
      logger,
      closeTimeoutMs: 5_000,
      handlers: render,
      queues: ['pdf'],
    });
    opened.push(interactiveWorker);
    await Promise.all(jobs.slice(0, 16));
    await expect.poll(() => started.length).toBe(17);
    expect(started.slice(0, 5)).toEqual(['A1', 'B1', 'C1', 'A2', 'B2']);
    // Each directory's own jobs keep their order.
    expect(started.filter((s) => s.startsWith('A'))).toEqual(Array.from({ length: 8 }, (_, i) => `A${i + 1}`));
    // A worker that does not take `pdf-bulk` leaves the exports' renders where they wait.
    expect(await inspectBulk.getPrioritizedCount()).toBe(3);

    const bulkWorker = new BullmqJobWorker({ redis: REDIS_URL, prefix, concurrency: 1, logger, closeTimeoutMs: 5_000, handlers: render, queues: ['pdf-bulk'] });
    opened.push(bulkWorker);
    await Promise.all(jobs);
    expect(started.slice(17)).toEqual(['X1', 'Y1', 'X2']);
  });

  it('when an older release put an export render on `pdf` with a bulk priority, then a worker that takes `pdf` runs it, as bulk work', async () => {
    const legacy = new Queue(QUEUE_NAME_BY_JOB['render-invoice-pdf'], { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    opened.push(legacy);
    const seen: Array<{ invoiceId: number; bulk: boolean }> = [];
    await worker(handlers(async (p) => (seen.push({ invoiceId: p.invoiceId, bulk: isBulkWork() }), { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' })));
    // What a release before ADR 0053 added for an export: the render job on `pdf`, its priority above 2^20.
    await legacy.add('render-invoice-pdf', payloadOf('OLD', 41), { jobId: `legacy-${randomUUID()}`, priority: 2 ** 20 + 1 });
    await legacy.add('render-invoice-pdf', payloadOf('OLD', 42), { jobId: `legacy-${randomUUID()}`, priority: 1 });
    await expect.poll(() => seen.length).toBe(2);
    expect(seen.sort((a, b) => a.invoiceId - b.invoiceId)).toEqual([
      { invoiceId: 41, bulk: true },
      { invoiceId: 42, bulk: false },
    ]);
  });

  it('when a worker takes both render queues, then a bulk backlog holds WORKER_CONCURRENCY slots of its own (the renderer decides which render gets a page: ADR 0059) and requests start beside it, one per page', async () => {
    const q = queue();
    await ready(q);
    const inspect = new Queue(QUEUE_NAME_BY_JOB['render-invoice-pdf'], { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    opened.push(inspect);
    const running = { bulk: 0, interactive: 0, maxBulk: 0, maxInteractive: 0 };
    const gate = deferred();
    await worker(
      handlers(async (p) => {
        const kind = isBulkWork() ? 'bulk' : 'interactive';
        running[kind] += 1;
        running.maxBulk = Math.max(running.maxBulk, running.bulk);
        running.maxInteractive = Math.max(running.maxInteractive, running.interactive);
        await gate.promise;
        running[kind] -= 1;
        return { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' };
      }),
    );
    const run = (invoiceId: number, bulk: boolean) =>
      q.runAndWait('render-invoice-pdf', payloadOf(bulk ? 'X' : 'A', invoiceId), { jobId: `slots-${invoiceId}-${randomUUID()}`, timeoutMs: 30_000, bulk });
    const bulkJobs = [1, 2, 3, 4].map((i) => run(i, true));
    await expect.poll(() => running.bulk).toBe(2);
    const requests = [11, 12, 13].map((i) => run(i, false));
    // Two requests run while the bulk backlog still waits: its two slots (one per page, nothing fetched ahead: ADR 0054)
    // stay two; requests are not fetched ahead either (one per page), so the third waits in Redis.
    await expect.poll(() => running.interactive).toBe(2);
    await expect.poll(() => inspect.getPrioritizedCount()).toBe(1);
    expect(running.bulk).toBe(2);
    gate.resolve();
    await Promise.all([...bulkJobs, ...requests]);
    expect(running.maxBulk).toBe(2);
    expect(running.maxInteractive).toBe(2);
  });
  it("when a worker fetches render jobs ahead of its pages and a busy directory fills them, then a job of another directory added later gets the next page before the busy one's fetched jobs, and the waiting jobs keep their locks", async () => {
    const q = queue();
    await ready(q);
    const inspect = new Queue(QUEUE_NAME_BY_JOB['render-invoice-pdf'], { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    opened.push(inspect);
    const lockDurationMs = 1_000;
    // Four pages, as the renderer's (one kept from bulk renders); each render holds its page until its gate opens.
    const permits = new RenderPermits(4, { reserved: 1 });
    const { gate, rendered, render } = gatedRenderer(permits);
    const run = (directory: string, invoiceId: number) =>
      q.runAndWait('render-invoice-pdf', payloadOf(directory, invoiceId), { jobId: `ahead-${directory}-${invoiceId}-${randomUUID()}`, timeoutMs: 30_000 });
    // More of A's jobs than the worker fetches: the backlog goes on in Redis, so the fair tags do not start over.
    const jobs = Array.from({ length: 12 }, (_, i) => run('A', i + 1));
    await expect.poll(() => inspect.getPrioritizedCount(), { timeout: 10_000 }).toBe(12);

    const w = new BullmqJobWorker({
      redis: REDIS_URL,
      prefix,
      concurrency: 4,
      logger,
      closeTimeoutMs: 5_000,
      handlers: render,
      queues: ['pdf'],
      lockDurationMs,
      // Interactive renders fetched ahead too (by default only bulk ones are, ADR 0054): the fair order must hold.
      renderJobsPerPage: { interactive: 2 },
    });
    opened.push(w);
    // Four of A's jobs render, and four more were fetched ahead and wait for a page.
    await vi.waitFor(() => expect(permits.state).toEqual({ held: 4, bulkHeld: 0, waitingInteractive: 4, waitingBulk: 0 }), { timeout: 10_000 });
    expect(new Set(rendered)).toEqual(new Set(['A1', 'A2', 'A3', 'A4']));
    expect(await inspect.getPrioritizedCount()).toBe(4);
    const fetchedAt = Date.now();
    // The queue's fair virtual time stands at the tags of the jobs on a page (0..3), not at those fetched ahead (up to 7),
    // so a newcomer's tag is lower than theirs.
    await vi.waitFor(async () => expect(await admin().get(`${prefix}:pdf:fair:interactive:virtual`)).toBe('3'));
    // The jobs waiting for a page past their lock's duration keep it (BullMQ renews the locks of every job it runs).
    const a8 = (await inspect.getActive()).find((job) => job.data.invoiceId === 8 && job.data.directory === 'A');
    expect(a8).toBeDefined();
    await vi.waitFor(
      async () => {
        expect(Date.now() - fetchedAt).toBeGreaterThan(1.5 * lockDurationMs);
        expect(await admin().exists(`${prefix}:pdf:${a8!.id}:lock`)).toBe(1);
      },
      { timeout: 10_000, interval: 100 },
    );

    jobs.push(run('B', 1));
    await expect.poll(() => inspect.getPrioritizedCount(), { timeout: 10_000 }).toBe(5);
    // A1 ends: its page goes to A5 (B's job is not fetched yet), its slot takes B's job, which waits beside A6..A8.
    gate('A1').resolve();
    await vi.waitFor(() => expect(rendered).toHaveLength(5), { timeout: 10_000 });
    expect(rendered[4]).toBe('A5');
    await vi.waitFor(() => expect(permits.state).toEqual({ held: 4, bulkHeld: 0, waitingInteractive: 4, waitingBulk: 0 }), { timeout: 10_000 });
    expect(await inspect.getPrioritizedCount()).toBe(4);
    // The next free page goes to B's job: its fair tag is lower than those of A's jobs fetched ahead.
    gate('A2').resolve();
    await vi.waitFor(() => expect(rendered).toHaveLength(6), { timeout: 10_000 });
    expect(rendered[5]).toBe('B1');
    for (const name of ['A3', 'A4', 'A5', 'A6', 'A7', 'A8', 'A9', 'A10', 'A11', 'A12', 'B1']) gate(name).resolve();
    await Promise.all(jobs);
    expect(rendered.slice(4)).toEqual(['A5', 'B1', 'A6', 'A7', 'A8', 'A9', 'A10', 'A11', 'A12']);
    // No job ran twice: none lost its lock while it waited.
    expect(rendered).toHaveLength(13);
  });
  it("when a worker has taken a directory's whole backlog and some of it waits for a page, then a job the directory adds meanwhile renders after them, not on tags started over", async () => {
    const q = queue();
    await ready(q);
    const inspect = new Queue(QUEUE_NAME_BY_JOB['render-invoice-pdf'], { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    opened.push(inspect);
    const permits = new RenderPermits(2, { reserved: 1 });
    const { gate, rendered, render } = gatedRenderer(permits);
    const run = (invoiceId: number) =>
      q.runAndWait('render-invoice-pdf', payloadOf('A', invoiceId), { jobId: `over-A-${invoiceId}-${randomUUID()}`, timeoutMs: 30_000 });
    const jobs = [1, 2, 3, 4].map(run);
    await expect.poll(() => inspect.getPrioritizedCount(), { timeout: 10_000 }).toBe(4);
    const w = new BullmqJobWorker({
      redis: REDIS_URL,
      prefix,
      concurrency: 2,
      logger,
      closeTimeoutMs: 5_000,
      handlers: render,
      queues: ['pdf'],
      renderJobsPerPage: { interactive: 2 },
    });
    opened.push(w);
    // Two render, two wait for a page; nothing of A's is left in Redis.
    await vi.waitFor(() => expect(permits.state).toEqual({ held: 2, bulkHeld: 0, waitingInteractive: 2, waitingBulk: 0 }), { timeout: 10_000 });
    await vi.waitFor(async () => expect(await admin().zcard(`${prefix}:pdf:fair:interactive:fetched`)).toBe(2));
    expect(await inspect.getPrioritizedCount()).toBe(0);
    jobs.push(run(5));
    await expect.poll(() => inspect.getPrioritizedCount(), { timeout: 10_000 }).toBe(1);
    // A1 ends: its page goes to A3, its slot takes A5, which waits beside A4.
    gate('A1').resolve();
    await vi.waitFor(() => expect(rendered).toHaveLength(3), { timeout: 10_000 });
    await vi.waitFor(() => expect(permits.state.waitingInteractive).toBe(2), { timeout: 10_000 });
    // The next page goes to A4: A5's tag follows A's earlier ones, it did not start over at 0.
    gate('A2').resolve();
    await vi.waitFor(() => expect(rendered).toHaveLength(4), { timeout: 10_000 });
    for (const name of ['A3', 'A4', 'A5']) gate(name).resolve();
    await Promise.all(jobs);
    expect(rendered.slice(2)).toEqual(['A3', 'A4', 'A5']);
    expect(await admin().zcard(`${prefix}:pdf:fair:interactive:fetched`)).toBe(0);
  });
});

/**
 * Render handlers that take a page of `permits` as the renderer does (acquirePage: by the job's fair rank), note the
 * render as `<directory><invoiceId>` in `rendered`, and hold the page until that name's gate opens.
 */
function gatedRenderer(permits: RenderPermits) {
  const gates = new Map<string, ReturnType<typeof deferred<void>>>();
  const gate = (name: string) => gates.get(name) ?? (gates.set(name, deferred()), gates.get(name)!);
  const rendered: string[] = [];
  const render = handlers(async (p) => {
    const name = `${p.directory}${p.invoiceId}`;
    const page = await acquirePage(permits, 60_000);
    if (!page) throw new Error(`${name} got no page`);
    rendered.push(name);
    await gate(name).promise;
    permits.release(page);
    return { pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' };
  });
  return { gate, rendered, render };
}
