import {
  FairQueue,
  InvalidJobPayloadError,
  jobConcurrency,
  ServiceUnavailableError,
  withTimeout,
  type JobHandler,
  type JobHandlers,
  type JobName,
  type JobPayloads,
  type JobQueuePort,
  type JobResults,
  type JobRun,
  type RunJobOptions,
} from '@logi/domain';
import { runAsBulkWork } from '../shared/bulk-work.js';
import { isTransientInfrastructureError } from '../shared/transient-errors.js';

export interface InlineJobQueueOptions {
  /** WORKER_CONCURRENCY: renders that run at once (more file stores, `jobConcurrency`); the rest wait their turn. */
  concurrency: number;
  /** How long close() waits for running jobs. */
  closeTimeoutMs?: number;
  /** Told of a job whose payload its handler refused (InvalidJobPayloadError), as the worker logs it. */
  onRefused?: (refused: { jobId: string; queue: JobName; issues: readonly string[] }) => void;
  /** Told of a render that handed its PDF over and then could not keep it in the cache: its callers never hear of it. */
  onCacheWriteFailed?: (failed: { jobId: string; cacheError: string }) => void;
}

/**
 * One kind of job's slots: how many run, how many may, and who waits. Bulk jobs (exports') and jobs requests wait for
 * each hold at most `limit`, and a request's job may take one more while bulk jobs hold slots, so it never waits behind
 * a bulk backlog for a slot, as the renderer's pages (docs/contribute/decisions/0053-worker-pools.md, 0059).
 */
interface Slots {
  interactiveActive: number;
  bulkActive: number;
  limit: number;
  waiting: FairQueue<Waiter>;
}

/** Slots a request's job may take beyond `limit` while bulk jobs hold theirs (the renderer's `reservedForInteractive`). */
const INTERACTIVE_EXTRA_SLOTS = 1;

interface Waiter {
  bulk: boolean;
  wake(): void;
}

interface Execution {
  promise: Promise<unknown>;
  /** Resolves with what the job handed over before its end (JobRun `handOverPdf`); never, for a job that hands nothing. */
  handedOver: Promise<unknown>;
  /** Callers still waiting; a job whose callers all gave up before it started is dropped. */
  waiters: number;
}

/**
 * Runs jobs in this process (no REDIS_URL or REDIS_SENTINELS). Behaves like the queue seen
 * from the caller: bounded wait, one execution per jobId at a time, domain
 * errors of the handler rethrown unchanged, an outage (database busy or gone)
 * as unavailable.
 */
export class InlineJobQueue implements JobQueuePort {
  private readonly running = new Map<string, Execution>();
  /**
   * Slots of each kind of job, as the worker has a queue per kind: a file store never waits behind renders. Jobs
   * waiting for a slot are shared fairly between directories (docs/contribute/decisions/0036-fair-render-scheduling.md).
   */
  private readonly slots = new Map<JobName, Slots>();
  private closed = false;

  /** `handlers` is read on first use, so the composition root can build them after the queue. */
  constructor(
    private readonly handlers: () => JobHandlers,
    private readonly options: InlineJobQueueOptions,
  ) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new Error('InlineJobQueue: concurrency must be a whole number >= 1');
    }
  }

  async runAndWait<N extends JobName>(name: N, payload: JobPayloads[N], options: RunJobOptions): Promise<JobResults[N]> {
    if (this.closed) throw new ServiceUnavailableError('job queue is closed');
    let execution = this.running.get(options.jobId);
    if (!execution) {
      execution = this.start(name, payload, options);
    }
    execution.waiters += 1;
    try {
      // A render's PDF answers as soon as the job hands it over; the job goes on to keep it in the cache (ADR 0057).
      const answer = Promise.race([execution.promise, execution.handedOver]);
      return (await withTimeout(answer, options.timeoutMs, { onTimeout: jobTimedOut })) as JobResults[N];
    } finally {
      execution.waiters -= 1;
    }
  }

  async ping(): Promise<void> {
    if (this.closed) throw new ServiceUnavailableError('job queue is closed');
  }

  /** Stops taking jobs, drops those not started, and waits (bounded) for the running ones. */
  async close(): Promise<void> {
    this.closed = true;
    // Woken with a slot of their own, they see `closed` and give it back without running.
    for (const slots of this.slots.values()) {
      for (const waiter of slots.waiting.drain()) grant(slots, waiter);
    }
    const pending = [...this.running.values()].map((e) => e.promise.catch(() => undefined));
    await withTimeout(Promise.all(pending), this.options.closeTimeoutMs ?? 10_000, { onTimeout: () => undefined });
  }

  private start<N extends JobName>(name: N, payload: JobPayloads[N], options: RunJobOptions): Execution {
    const { jobId } = options;
    let handOver!: (early: unknown) => void;
    let handedOver = false;
    const execution: Execution = { promise: Promise.resolve(), handedOver: new Promise((resolve) => (handOver = resolve)), waiters: 0 };
    // Only a render hands over: its callers answer with the PDF while the job writes it into the cache.
    const run: JobRun = {
      firstRun: true,
      ...(name === 'render-invoice-pdf' ? { handOverPdf: async (result, pdf) => ((handedOver = true), handOver({ ...result, pdf })) } : {}),
    };
    execution.promise = (async () => {
      try {
        const slots = this.slotsOf(name);
        // The payload is checked by its handler (parseJobPayload); until then it is only a fair-share label.
        const directory = (payload as { directory?: unknown } | null)?.directory;
        const bulk = options.bulk ?? false;
        await acquireSlot(slots, typeof directory === 'string' ? directory : '', bulk);
        try {
          if (this.closed) throw new ServiceUnavailableError('job queue is closed');
          if (execution.waiters === 0) throw new ServiceUnavailableError('job was dropped before it started');
          const handler = this.handlers()[name] as JobHandler<N>;
          try {
            // The renderer gives an interactive render a page beside an export's renders. Every run here is a
            // first one: this queue never retries a job, and a job id already running is joined, not started again.
            return await runAsBulkWork(bulk, () => handler(payload, run));
          } catch (error) {
            if (error instanceof InvalidJobPayloadError) this.options.onRefused?.({ jobId, queue: name, issues: error.issues });
            // As the worker reports it: an outage is "unavailable" (503, try again), not a failure of the job.
            if (isTransientInfrastructureError(error)) throw new ServiceUnavailableError('a dependency of the job is unavailable');
            throw error;
          }
        } finally {
          releaseSlot(slots, bulk);
        }
      } finally {
        this.running.delete(jobId);
      }
    })();
    // Nobody may be listening any more (all callers timed out); the outcome is theirs, not the process's.
    execution.promise.then(
      (result) => {
        const cacheError = (result as { cacheError?: unknown } | null)?.cacheError;
        if (handedOver && typeof cacheError === 'string') this.options.onCacheWriteFailed?.({ jobId, cacheError });
      },
      () => undefined,
    );
    this.running.set(jobId, execution);
    return execution;
  }

  private slotsOf(name: JobName): Slots {
    let slots = this.slots.get(name);
    if (!slots) {
      const limit = jobConcurrency(name, this.options.concurrency);
      slots = { interactiveActive: 0, bulkActive: 0, limit, waiting: new FairQueue<Waiter>() };
      this.slots.set(name, slots);
    }
    return slots;
  }
}

/** A request's job: fewer than `limit` of them run, and it may take one of the extra slots beside bulk jobs. */
function interactiveMayStart(slots: Slots): boolean {
  return slots.interactiveActive < slots.limit && slots.interactiveActive + slots.bulkActive < slots.limit + INTERACTIVE_EXTRA_SLOTS;
}

/** A bulk job: one of the `limit` slots, never an extra one. */
function bulkMayStart(slots: Slots): boolean {
  return slots.interactiveActive + slots.bulkActive < slots.limit;
}

async function acquireSlot(slots: Slots, directory: string, bulk: boolean): Promise<void> {
  if (bulk ? bulkMayStart(slots) : interactiveMayStart(slots)) {
    grant(slots, { bulk, wake: () => undefined });
    return;
  }
  // releaseSlot hands its slot straight to the next waiter (grant), so the counts are not touched here.
  await new Promise<void>((resolve) => slots.waiting.push(directory, { bulk, wake: resolve }, { bulk }));
}

function releaseSlot(slots: Slots, bulk: boolean): void {
  if (bulk) slots.bulkActive -= 1;
  else slots.interactiveActive -= 1;
  // Interactive jobs first; a bulk one only on one of the `limit` slots.
  for (;;) {
    if (slots.waiting.count('interactive') > 0 && interactiveMayStart(slots)) grant(slots, slots.waiting.shift({ interactiveOnly: true })!);
    else if (slots.waiting.count('bulk') > 0 && bulkMayStart(slots)) grant(slots, slots.waiting.shift({ bulkOnly: true })!);
    else return;
  }
}

function grant(slots: Slots, waiter: Waiter): void {
  if (waiter.bulk) slots.bulkActive += 1;
  else slots.interactiveActive += 1;
  waiter.wake();
}

function jobTimedOut(): never {
  throw new ServiceUnavailableError('job timed out');
}
