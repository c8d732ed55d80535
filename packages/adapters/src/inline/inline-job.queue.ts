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
import { INTERACTIVE_RESERVE_HOLD_MS, runAsBulkWork } from '../shared/bulk-work.js';
import { RecentEnd } from '../shared/recent-end.js';
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
  /** How long a slot stays kept from bulk jobs after a request's job ended (INTERACTIVE_RESERVE_HOLD_MS by default). */
  reserveHoldMs?: number;
}

/**
 * One kind of job's slots: how many run, how many may, and who waits. While requests' jobs run or ended less than
 * `INTERACTIVE_RESERVE_HOLD_MS` ago, bulk jobs (exports') hold at most `limit - 1` of them when there are more than
 * one, so a job a request waits for does not wait behind a bulk backlog for a slot
 * (docs/contribute/decisions/0053-worker-pools.md); with no request around, every one (ADR 0059).
 */
interface Slots {
  active: number;
  limit: number;
  bulkActive: number;
  bulkLimit: number;
  waiting: FairQueue<Waiter>;
  /** A request's job ended less than the hold ago. */
  interactiveEnded: RecentEnd;
}

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
            // The renderer keeps a page for interactive renders while clients render (ADR 0059). Every run here is a
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
      const created: Slots = {
        active: 0,
        limit,
        bulkActive: 0,
        bulkLimit: Math.max(1, limit - 1),
        waiting: new FairQueue<Waiter>(),
        // Once the hold has passed, a bulk job may take a free slot that was kept.
        interactiveEnded: new RecentEnd(this.options.reserveHoldMs ?? INTERACTIVE_RESERVE_HOLD_MS, () => handOut(created)),
      };
      slots = created;
      this.slots.set(name, slots);
    }
    return slots;
  }
}

/** How many slots bulk jobs may hold now: one fewer than all while requests' jobs run or ended within the hold. */
function bulkLimitNow(slots: Slots): number {
  const interactiveActive = slots.active - slots.bulkActive;
  return interactiveActive > 0 || slots.interactiveEnded.active ? slots.bulkLimit : slots.limit;
}

async function acquireSlot(slots: Slots, directory: string, bulk: boolean): Promise<void> {
  if (slots.active < slots.limit && (!bulk || slots.bulkActive < bulkLimitNow(slots))) {
    grant(slots, { bulk, wake: () => undefined });
    return;
  }
  // releaseSlot hands its slot straight to the next waiter (grant), so the counts are not touched here.
  await new Promise<void>((resolve) => slots.waiting.push(directory, { bulk, wake: resolve }, { bulk }));
}

function releaseSlot(slots: Slots, bulk: boolean): void {
  slots.active -= 1;
  if (bulk) slots.bulkActive -= 1;
  else slots.interactiveEnded.note();
  handOut(slots);
}

/** Free slots to the waiting jobs: interactive ones first; a bulk one only while bulk jobs hold fewer than their share. */
function handOut(slots: Slots): void {
  while (slots.active < slots.limit) {
    const next = slots.waiting.shift({ interactiveOnly: slots.bulkActive >= bulkLimitNow(slots) });
    if (!next) return;
    grant(slots, next);
  }
}

function grant(slots: Slots, waiter: Waiter): void {
  slots.active += 1;
  if (waiter.bulk) slots.bulkActive += 1;
  waiter.wake();
}

function jobTimedOut(): never {
  throw new ServiceUnavailableError('job timed out');
}
