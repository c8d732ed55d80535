import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { Queue } from 'bullmq';
import { BullmqJobWorker, QUEUE_NAME_BY_JOB } from '@logi/adapters';
import { TcpProxy } from '../support/tcp-proxy.js';
import { InvalidJobPayloadError, InvoiceNotFoundError, JobOutcomeUnknownError, ServiceUnavailableError, ValidationError, type JobPayloads } from '@logi/domain';
import { bullmqHarness, deferred, handlers, pdfPayload, REDIS_URL } from '../support/bullmq-harness.js';
import { pdfKeyOf } from '../support/job-keys.js';

const harness = bullmqHarness();
const { prefix, logger, logLines, opened, queue, worker, ready } = harness;

/** A store job of ACME's order 1, for a file of its own. */
const storePayload = (): JobPayloads['store-order-file'] => ({
  directory: 'ACME',
  orderId: 1,
  categoryId: null,
  name: 'cmr.pdf',
  size: 3,
  contentType: 'application/pdf',
  sha256: 'a'.repeat(64),
  storageKey: `orders/ACME/1/${randomUUID()}`,
  requestId: 'r',
  deadline: Date.UTC(2100, 0, 1),
});

describe('BullmqJobQueue with BullmqJobWorker on real Redis', () => {
  it('when a worker runs the job, then the caller gets its result and the worker logs the request id', async () => {
    const seen: unknown[] = [];
    await worker(handlers(async (p) => (seen.push(p), { pdfKey: p.pdfKey, bytes: 1234, invoiceNr: 'FV/1' })));
    const q = queue();
    await ready(q);
    const result = await q.runAndWait('render-invoice-pdf', pdfPayload(11, 'req-round-trip'), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 });
    expect(result).toEqual({ pdfKey: pdfKeyOf(11), bytes: 1234, invoiceNr: 'FV/1' });
    expect(seen).toEqual([pdfPayload(11, 'req-round-trip')]);
    const lines = logLines.filter((l) => l.requestId === 'req-round-trip').map((l) => l.msg);
    expect(lines).toEqual(['job started', 'job completed']);
  });

  it('when a job or a ping is sent right after the queue is made, then it waits for the connect instead of failing', async () => {
    await worker(handlers(async (p) => ({ pdfKey: p.pdfKey, bytes: 3, invoiceNr: 'FV/1' })));
    await expect(queue().ping()).resolves.toBeUndefined();
    const q = queue();
    await expect(q.runAndWait('render-invoice-pdf', pdfPayload(12), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 })).resolves.toEqual({
      pdfKey: pdfKeyOf(12),
      bytes: 3,
      invoiceNr: 'FV/1',
    });
  });

  it('when a store job returns a storage failure, then it arrives as a result, not an error', async () => {
    await worker(
      handlers(
        async (p) => ({ pdfKey: p.pdfKey, bytes: 0, invoiceNr: 'FV/1' }),
        async () => ({ error: 'Storage unavailable: connect ECONNREFUSED' }),
      ),
    );
    const q = queue();
    await ready(q);
    const payload = storePayload();
    await expect(q.runAndWait('store-order-file', payload, { jobId: `store-${randomUUID()}`, timeoutMs: 5_000 })).resolves.toEqual({
      error: 'Storage unavailable: connect ECONNREFUSED',
    });
  });

  it('when a worker stops with a store job still running, then the worker that takes it over is told it is not the first run', async () => {
    const runs: Array<boolean | undefined> = [];
    const started = deferred();
    const render = async (p: JobPayloads['render-invoice-pdf']) => ({ pdfKey: p.pdfKey, bytes: 1, invoiceNr: 'FV/1' });
    // Short locks, so that BullMQ's stalled-job check gives the job to the second worker within seconds.
    const workerOptions = { redis: REDIS_URL, prefix, concurrency: 1, logger, closeTimeoutMs: 100, lockDurationMs: 1_000 };
    const first = new BullmqJobWorker({
      ...workerOptions,
      // Runs until the process would be killed: the job stays active, its lock no longer renewed once the worker closed.
      handlers: handlers(render, (_payload, run) => (runs.push(run?.firstRun), started.resolve(), new Promise(() => undefined))),
    });
    opened.push(first);
    await first.waitUntilReady();
    const q = queue();
    await ready(q);
    const payload = storePayload();
    const result = q.runAndWait('store-order-file', payload, { jobId: `store-${randomUUID()}`, timeoutMs: 30_000 });
    await started.promise;
    await first.close();
    const second = new BullmqJobWorker({ ...workerOptions, handlers: handlers(render, async (_payload, run) => (runs.push(run?.firstRun), { fileId: 7 })) });
    opened.push(second);
    await expect(result).resolves.toEqual({ fileId: 7 });
    expect(runs).toEqual([true, false]);
  });

  it('when the handler throws a domain error, then the caller gets that domain error and the job is not retried', async () => {
    let runs = 0;
    await worker(handlers(async () => (runs++, Promise.reject(new InvoiceNotFoundError()))));
    const q = queue({ attempts: 3 });
    await ready(q);
    const error = await q.runAndWait('render-invoice-pdf', pdfPayload(404), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvoiceNotFoundError);
    expect((error as InvoiceNotFoundError).code).toBe('INVOICE_NOT_FOUND');
    expect(runs).toBe(1);
  });

  it('when a payload the workers would refuse is sent, then it is refused at once and never reaches Redis', async () => {
    let runs = 0;
    await worker(handlers(async () => (runs++, Promise.reject(new Error('must not run')))));
    const q = queue();
    await ready(q);
    const forged = { ...pdfPayload(7), directory: '../other-client' };
    const jobId = `pdf-${randomUUID()}`;
    const error = await q.runAndWait('render-invoice-pdf', forged, { jobId, timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidJobPayloadError);
    expect((error as InvalidJobPayloadError).code).toBe('INVALID_JOB_PAYLOAD');
    const direct = new Queue(QUEUE_NAME_BY_JOB['render-invoice-pdf'], { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    try {
      expect(await direct.getJob(jobId)).toBeUndefined();
    } finally {
      await direct.close();
    }
    expect(runs).toBe(0);
  });

  it('when the handler throws a validation error, then its field errors survive the trip', async () => {
    await worker(handlers(async () => Promise.reject(new ValidationError('The lang is invalid.', { lang: ['The lang is invalid.'] }))));
    const q = queue();
    await ready(q);
    const error = await q.runAndWait('render-invoice-pdf', pdfPayload(1), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toBe('The lang is invalid.');
    expect((error as ValidationError).errors).toEqual({ lang: ['The lang is invalid.'] });
  });

  it('when the handler fails once with a plain error, then the job is retried and the caller gets the result; only the first run is told it is one', async () => {
    const runs: Array<boolean | undefined> = [];
    await worker(
      handlers(async (p, run) => {
        runs.push(run?.firstRun);
        if (runs.length === 1) throw new Error('browser crashed');
        return { pdfKey: p.pdfKey, bytes: 5, invoiceNr: 'FV/1' };
      }),
    );
    const q = queue({ attempts: 3, backoffMs: 10 });
    await ready(q);
    await expect(q.runAndWait('render-invoice-pdf', pdfPayload(2), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 })).resolves.toEqual({
      pdfKey: pdfKeyOf(2),
      bytes: 5,
      invoiceNr: 'FV/1',
    });
    expect(runs).toEqual([true, false]);
  });

  it('when every try fails with a plain error, then the caller gets a plain error that is not a domain error', async () => {
    await worker(handlers(async () => Promise.reject(new Error('browser crashed'))));
    const q = queue({ attempts: 2, backoffMs: 10 });
    await ready(q);
    const error = await q.runAndWait('render-invoice-pdf', pdfPayload(3), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ServiceUnavailableError);
    expect((error as Error).message).toBe('Job failed: browser crashed');
  });

  it('when every try meets an outage (the database refuses connections), then the caller gets ServiceUnavailableError after the last try', async () => {
    let runs = 0;
    await worker(handlers(async () => (runs++, Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' })))));
    const q = queue({ attempts: 2, backoffMs: 10 });
    await ready(q);
    const error = await q.runAndWait('render-invoice-pdf', pdfPayload(9), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(runs).toBe(2);
  });

  it('when no worker runs, then the caller gets ServiceUnavailableError at its deadline and the job is withdrawn', async () => {
    const q = queue();
    await ready(q);
    const jobId = `pdf-${randomUUID()}`;
    const started = Date.now();
    const error = await q.runAndWait('render-invoice-pdf', pdfPayload(4), { jobId, timeoutMs: 400 }).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as ServiceUnavailableError).reason).toBe('job timed out');
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(1_500);
    expect(await harness.admin().exists(`${prefix}:pdf:${jobId}`)).toBe(0);
  });

  it('when Redis is unreachable, then runAndWait and ping fail fast with ServiceUnavailableError', async () => {
    const q = queue({ redis: 'redis://127.0.0.1:1' });
    const started = Date.now();
    const error = await q.runAndWait('render-invoice-pdf', pdfPayload(5), { jobId: `pdf-${randomUUID()}`, timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    await expect(q.ping()).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('when Redis goes away after the queue was connected, then callers fail fast, and the queue works again once Redis is back', async () => {
    await worker(handlers(async (p) => ({ pdfKey: p.pdfKey, bytes: p.invoiceId, invoiceNr: 'FV/1' })));
    const proxy = await TcpProxy.start('127.0.0.1', 6379);
    try {
      const q = queue({ redis: `redis://${proxy.address.host}:${proxy.address.port}` });
      await ready(q);
      await expect(q.runAndWait('render-invoice-pdf', pdfPayload(21), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 })).resolves.toEqual({
        pdfKey: pdfKeyOf(21),
        bytes: 21,
        invoiceNr: 'FV/1',
      });
      await proxy.cut();
      const started = Date.now();
      const error = await q.runAndWait('render-invoice-pdf', pdfPayload(22), { jobId: `pdf-${randomUUID()}`, timeoutMs: 10_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      await expect(q.ping()).rejects.toBeInstanceOf(ServiceUnavailableError);
      expect(Date.now() - started).toBeLessThan(2_500);
      await proxy.restore();
      await ready(q);
      await expect(q.runAndWait('render-invoice-pdf', pdfPayload(23), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 })).resolves.toEqual({
        pdfKey: pdfKeyOf(23),
        bytes: 23,
        invoiceNr: 'FV/1',
      });
    } finally {
      await proxy.cut();
    }
  });

  it('when Redis goes away while a caller waits on a job, then the caller fails fast, long before its deadline, and the queue heals', async () => {
    const proxy = await TcpProxy.start('127.0.0.1', 6379);
    try {
      const q = queue({ redis: `redis://${proxy.address.host}:${proxy.address.port}` });
      await ready(q);
      // No worker yet: the job waits in the queue, and so does its caller.
      const jobId = `pdf-${randomUUID()}`;
      const waiting = q.runAndWait('render-invoice-pdf', pdfPayload(31), { jobId, timeoutMs: 20_000 }).catch((e: unknown) => e);
      await vi.waitFor(async () => expect(await harness.admin().exists(`${prefix}:pdf:${jobId}`)).toBe(1), { timeout: 5_000, interval: 20 });
      const cutAt = Date.now();
      await proxy.cut();
      const error = await waiting;
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      // The job's key shows before add()'s reply has reached the caller: a cut in between fails the add itself
      // (outcome unknown, ioredis's retry limit), a later one the wait (connection lost). Both are bounded 503s.
      expect([
        'job queue unavailable: Redis connection lost',
        'job queue unavailable: Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
      ]).toContain((error as ServiceUnavailableError).reason);
      // About the reconnect grace (1 s), not the 20 s deadline.
      expect(Date.now() - cutAt).toBeLessThan(5_000);

      await proxy.restore();
      await ready(q);
      await worker(handlers(async (p) => ({ pdfKey: p.pdfKey, bytes: p.invoiceId, invoiceNr: 'FV/1' })));
      await expect(q.runAndWait('render-invoice-pdf', pdfPayload(32), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 })).resolves.toEqual({
        pdfKey: pdfKeyOf(32),
        bytes: 32,
        invoiceNr: 'FV/1',
      });
    } finally {
      await proxy.cut();
    }
  });

  it('when the connection drops for a moment and the job finishes meanwhile, then the caller still gets its result', async () => {
    const started = deferred();
    const release = deferred();
    await worker(handlers(async (p) => (started.resolve(), await release.promise, { pdfKey: p.pdfKey, bytes: 33, invoiceNr: 'FV/1' })));
    const proxy = await TcpProxy.start('127.0.0.1', 6379);
    try {
      const q = queue({ redis: `redis://${proxy.address.host}:${proxy.address.port}` });
      await ready(q);
      const result = q.runAndWait('render-invoice-pdf', pdfPayload(33), { jobId: `pdf-${randomUUID()}`, timeoutMs: 10_000 });
      await started.promise;
      // A blip: the connections drop and come straight back (ioredis reconnects within its backoff).
      await proxy.cut();
      await proxy.restore();
      await ready(q);
      release.resolve();
      await expect(result).resolves.toEqual({ pdfKey: pdfKeyOf(33), bytes: 33, invoiceNr: 'FV/1' });
    } finally {
      await proxy.cut();
    }
  });

  it('when a job is gone from Redis after a reconnect (lost in a failover to a replica that never got it), then its caller hears "outcome unknown" within a second or so, not at its deadline', async () => {
    // No worker: the job waits in its queue until it is lost.
    const proxy = await TcpProxy.start('127.0.0.1', 6379);
    const direct = new Queue(QUEUE_NAME_BY_JOB['render-invoice-pdf'], { connection: { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: 1 }, prefix });
    try {
      const q = queue({ redis: `redis://${proxy.address.host}:${proxy.address.port}` });
      await ready(q);
      const jobId = `pdf-${randomUUID()}`;
      const started = Date.now();
      const result = q.runAndWait('render-invoice-pdf', pdfPayload(34), { jobId, timeoutMs: 20_000 }).catch((e: unknown) => e);
      await vi.waitFor(async () => expect(await direct.getJobState(jobId)).toBe('prioritized'), { timeout: 5_000, interval: 20 });
      // The connections drop, the job disappears meanwhile, and they come straight back (within the 1 s grace).
      await proxy.cut();
      await direct.remove(jobId);
      await proxy.restore();
      const error = await result;
      expect(error).toBeInstanceOf(JobOutcomeUnknownError);
      expect((error as JobOutcomeUnknownError).reason).toMatch(/the job is gone from Redis/);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await proxy.cut();
      await direct.close();
    }
  });

  it('when the same jobId is sent twice, at once and again later, then the job runs once and both callers get its result', async () => {
    const release = deferred();
    let runs = 0;
    await worker(handlers(async (p) => (runs++, await release.promise, { pdfKey: p.pdfKey, bytes: runs, invoiceNr: 'FV/1' })));
    const q = queue();
    await ready(q);
    const jobId = `pdf-${randomUUID()}`;
    const first = q.runAndWait('render-invoice-pdf', pdfPayload(6), { jobId, timeoutMs: 5_000 });
    const second = q.runAndWait('render-invoice-pdf', pdfPayload(6), { jobId, timeoutMs: 5_000 });
    release.resolve();
    expect(await Promise.all([first, second])).toEqual([
      { pdfKey: pdfKeyOf(6), bytes: 1, invoiceNr: 'FV/1' },
      { pdfKey: pdfKeyOf(6), bytes: 1, invoiceNr: 'FV/1' },
    ]);
    await expect(q.runAndWait('render-invoice-pdf', pdfPayload(6), { jobId, timeoutMs: 5_000 })).resolves.toEqual({
      pdfKey: pdfKeyOf(6),
      bytes: 1,
      invoiceNr: 'FV/1',
    });
    expect(runs).toBe(1);
  });

  it('when the worker closes during a job, then the job finishes and its caller still gets the result', async () => {
    const started = deferred();
    const release = deferred();
    const w = await worker(handlers(async (p) => (started.resolve(), await release.promise, { pdfKey: p.pdfKey, bytes: 9, invoiceNr: 'FV/1' })));
    const q = queue();
    await ready(q);
    const result = q.runAndWait('render-invoice-pdf', pdfPayload(7), { jobId: `pdf-${randomUUID()}`, timeoutMs: 5_000 });
    await started.promise;
    const closed = w.close();
    release.resolve();
    await closed;
    await expect(result).resolves.toEqual({ pdfKey: pdfKeyOf(7), bytes: 9, invoiceNr: 'FV/1' });
  });

  it('when a running job outlasts the close bound, then close returns within the bound and the job is left for another worker', async () => {
    const started = deferred();
    const release = deferred();
    const w = new BullmqJobWorker({
      redis: REDIS_URL,
      prefix,
      handlers: handlers(async (p) => (started.resolve(), await release.promise, { pdfKey: p.pdfKey, bytes: 0, invoiceNr: 'FV/1' })),
      concurrency: 1,
      logger,
      closeTimeoutMs: 300,
    });
    opened.push(w);
    await w.waitUntilReady();
    const q = queue();
    await ready(q);
    const jobId = `pdf-${randomUUID()}`;
    const result = q.runAndWait('render-invoice-pdf', pdfPayload(8), { jobId, timeoutMs: 1_500 }).catch((e: unknown) => e);
    await started.promise;
    const closing = Date.now();
    await w.close();
    // The bound is closeTimeoutMs plus at most 2 s for cutting Redis.
    expect(Date.now() - closing).toBeLessThan(2_300);
    expect(await harness.admin().lrange(`${prefix}:pdf:active`, 0, -1)).toContain(jobId);
    release.resolve();
    expect(await result).toBeInstanceOf(ServiceUnavailableError);
  });
});
