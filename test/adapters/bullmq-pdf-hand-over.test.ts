import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { Queue } from 'bullmq';
import { PDF_HAND_OVER_MAX_BYTES, PDF_HAND_OVER_TTL_MS, pdfHandOverKey, QUEUE_NAME_BY_JOB } from '@logi/adapters';
import type { JobRun } from '@logi/domain';
import { bullmqHarness, deferred, handlers, pdfPayload } from '../support/bullmq-harness.js';
import { pdfKeyOf } from '../support/job-keys.js';

const harness = bullmqHarness();
const { prefix, logLines, queue, worker, ready, admin } = harness;

const PDF = Buffer.from('%PDF-1.7 handed over');

describe('a render job hands its PDF to the waiting API before it ends (ADR 0057)', () => {
  it('when the worker hands the PDF over, then the caller answers with it while the job still runs, and the key is taken', async () => {
    const jobEnds = deferred();
    const ended = deferred();
    const jobId = `pdf-${randomUUID()}`;
    await worker(
      handlers(async (p, run?: JobRun) => {
        const result = { pdfKey: `pdf-cache/ACME/${p.invoiceId}.pdf`, bytes: PDF.length, invoiceNr: 'FV/1', version: 'v1' };
        await run!.handOverPdf!(result, PDF);
        // The cache write, which the caller no longer waits for.
        await jobEnds.promise;
        ended.resolve();
        return result;
      }),
    );
    const q = queue();
    await ready(q);
    const result = await q.runAndWait('render-invoice-pdf', pdfPayload(41), { jobId, timeoutMs: 5_000 });
    expect(result).toEqual({ pdfKey: 'pdf-cache/ACME/41.pdf', bytes: PDF.length, invoiceNr: 'FV/1', version: 'v1', pdf: PDF });
    // Answered before the job ended, and the PDF taken out of Redis.
    expect(await admin().exists(pdfHandOverKey(prefix, jobId))).toBe(0);
    jobEnds.resolve();
    await ended.promise;
  });

  it('when a progress event does not match the PDF under the job key, then the caller waits for the job end as before', async () => {
    const jobId = `pdf-${randomUUID()}`;
    await worker(
      handlers(async (p, run?: JobRun) => {
        const result = { pdfKey: p.pdfKey, bytes: PDF.length, invoiceNr: 'FV/1', version: 'v1' };
        // A forged or damaged note: its size is not the stored PDF's.
        await run!.handOverPdf!({ ...result, bytes: PDF.length + 1 }, PDF);
        return result;
      }),
    );
    const q = queue();
    await ready(q);
    const result = await q.runAndWait('render-invoice-pdf', pdfPayload(42), { jobId, timeoutMs: 5_000 });
    expect(result).toEqual({ pdfKey: pdfKeyOf(42), bytes: PDF.length, invoiceNr: 'FV/1', version: 'v1' });
  });

  it('when a PDF is too large to hand over, then the hand-over fails, nothing is put in Redis, and the job end answers', async () => {
    const jobId = `pdf-${randomUUID()}`;
    const outcomes: string[] = [];
    await worker(
      handlers(async (p, run?: JobRun) => {
        const big = Buffer.alloc(PDF_HAND_OVER_MAX_BYTES + 1);
        const result = { pdfKey: p.pdfKey, bytes: big.length, invoiceNr: 'FV/1' };
        outcomes.push(
          await run!.handOverPdf!(result, big).then(
            () => 'handed over',
            (error: Error) => error.message,
          ),
        );
        return result;
      }),
    );
    const q = queue();
    await ready(q);
    const result = await q.runAndWait('render-invoice-pdf', pdfPayload(43), { jobId, timeoutMs: 5_000 });
    expect(result).toEqual({ pdfKey: pdfKeyOf(43), bytes: PDF_HAND_OVER_MAX_BYTES + 1, invoiceNr: 'FV/1' });
    expect(outcomes).toEqual(['PDF too large to hand over through Redis']);
    expect(await admin().exists(pdfHandOverKey(prefix, jobId))).toBe(0);
  });

  it('when a caller of an older release waits (no progress listener), then the job end still answers and the hand-over key expires', async () => {
    const jobId = `pdf-${randomUUID()}`;
    await worker(
      handlers(async (p, run?: JobRun) => {
        const result = { pdfKey: p.pdfKey, bytes: PDF.length, invoiceNr: 'FV/1' };
        await run!.handOverPdf!(result, PDF);
        return result;
      }),
    );
    // The older API: a plain BullMQ add and wait on the job's end.
    const older = new Queue(QUEUE_NAME_BY_JOB['render-invoice-pdf'], { connection: { host: '127.0.0.1', port: 6379 }, prefix });
    harness.opened.push(older);
    const job = await older.add('render-invoice-pdf', pdfPayload(44), { jobId });
    const returned = await vi.waitFor(
      async () => {
        const state = await older.getJobState(jobId);
        if (state !== 'completed') throw new Error(`job ${state}`);
        return (await older.getJob(jobId))?.returnvalue;
      },
      { timeout: 5_000, interval: 20 },
    );
    expect(returned).toEqual({ pdfKey: pdfKeyOf(44), bytes: PDF.length, invoiceNr: 'FV/1' });
    expect(job.id).toBe(jobId);
    const ttl = await admin().pttl(pdfHandOverKey(prefix, jobId));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(PDF_HAND_OVER_TTL_MS);
    expect(logLines.some((l) => l.msg === 'job completed')).toBe(true);
  });
});
