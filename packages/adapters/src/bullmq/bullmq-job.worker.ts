import type { Job, Telemetry, Worker } from 'bullmq';
import { lazyModule } from '../shared/lazy-module.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  DomainError,
  InvalidJobPayloadError,
  jobConcurrency,
  ServiceUnavailableError,
  withTimeout,
  type JobHandler,
  type JobHandlers,
  type JobName,
  type JobRun,
} from '@logi/domain';
import type { RedisEndpoint } from '@logi/config';
import { createRedis } from '../redis/create-redis.js';
import { isTransientInfrastructureError } from '../shared/transient-errors.js';
import { encodeDomainError } from './job-failure.codec.js';
import { runAsRenderWork } from '../shared/bulk-work.js';
import { fairClassOf, fairFetched, fairStarted, isBulkPriority } from './fair-priority.js';
import { DEFAULT_QUEUE_PREFIX, JOB_QUEUES } from './job-queue-names.js';
import { handOverPdf } from './pdf-hand-over.js';

const bullmq = lazyModule<typeof import('bullmq')>('bullmq');

export interface BullmqJobWorkerOptions {
  /** A redis:// URL, or a Sentinel group (createRedis). */
  redis: RedisEndpoint | string;
  handlers: JobHandlers;
  /** WORKER_CONCURRENCY: renders this worker runs at once (more file stores: `jobConcurrency`). */
  concurrency: number;
  /** WORKER_QUEUES: the queues this worker takes (JOB_QUEUES' names); absent: every one. */
  queues?: readonly string[];
  logger: Logger;
  prefix?: string;
  /** Lock on a running job; a dead worker's jobs go to another after it expires (checked every half of it). */
  lockDurationMs?: number;
  /** How long close() lets running jobs finish before handing them back. */
  closeTimeoutMs?: number;
  /** With tracing on: each job runs in a span that continues the trace the job was added in. */
  telemetry?: Telemetry;
  /** The stall watchdog's bounds (docs/operate/redis-and-sentinel.md#a-worker-that-stops-taking-jobs). */
  stall?: Partial<StallBounds>;
  /**
   * Render jobs this worker takes per page it may render on, by kind: a job reads its data, looks up the cache and
   * stores its PDF while another holds the page, and the page goes to the waiting job of best fair rank (RenderPermits;
   * docs/contribute/decisions/0054-fetch-ahead-render-ranks.md). Default 1 for both kinds: measured on two cores,
   * fetching ahead gained no PDFs/s and cost the interactive renders beside it (ADR 0054's amendments).
   */
  renderJobsPerPage?: { interactive?: number; bulk?: number };
  /** Told when a job's first attempt starts, with how long it waited since it was added (the fair-share wait metric). */
  onFirstStart?: (start: JobFirstStart) => void;
}

/** A job whose first attempt starts now. */
export interface JobFirstStart {
  queue: string;
  waitedMs: number;
  /** Its place in the queue's fair shares (fairClassOf); null for a job added without one. */
  fair: ReturnType<typeof fairClassOf>;
}

export interface StallBounds {
  /** How often the watchdog looks (ms). */
  checkIntervalMs: number;
  /** Jobs waiting this long (ms) while this worker has a free slot and takes none: its connection is made anew. */
  recreateAfterMs: number;
  /** Still none taken this long (ms) after the stall began: the worker reports itself not live, for a restart. */
  notLiveAfterMs: number;
}

const STALL_DEFAULTS: StallBounds = { checkIntervalMs: 1_000, recreateAfterMs: 5_000, notLiveAfterMs: 30_000 };

/** The BullMQ workers of one connection, made together and replaced together. */
export interface Generation {
  connection: Redis;
  workers: Worker[];
}

/**
 * Takes jobs from its queues (every one, or those WORKER_QUEUES names) and runs the shared job handlers. The processor
 * is a thin adapter; what it adds is the retry rule: a domain error will fail
 * the same way again, so it ends the job at once, carrying its code back; an
 * outage is tried again, and reported as one when the tries run out.
 */
export class BullmqJobWorker {
  private readonly prefix: string;
  private current: Generation;
  /** Earlier generations still finishing their running jobs after a stall made new ones. */
  private readonly retiring = new Set<Promise<void>>();
  /** Commands of our own (the fair shares' virtual time, the watchdog's counts); BullMQ may block on the workers' connection. */
  private readonly commands: Redis;
  private closing: Promise<void> | null = null;
  private readonly stall: StallBounds;
  private readonly watchdog: NodeJS.Timeout;
  /** The queues this worker takes, each with its slots (BullMQ's concurrency, which the stall watchdog compares with). */
  private readonly queues: ReadonlyArray<{ queue: string; job: JobName; bulk: boolean; slots: number }>;
  /** Per queue: jobs running in this process, and when the latest one started. */
  private readonly taking = new Map<string, { running: number; lastStartedAt: number }>();
  /** When jobs were first seen waiting while a slot was free and none was taken; null while all is well. */
  private stalledSince: number | null = null;
  private recreatedAt: number | null = null;
  private recreations = 0;
  /** Checks the watchdog completed that could ask Redis. */
  private checks = 0;
  private watching = false;
  private reportedNotLive = false;

  constructor(private readonly options: BullmqJobWorkerOptions) {
    this.prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
    this.stall = { ...STALL_DEFAULTS, ...options.stall };
    this.commands = createRedis(options.redis, {
      role: 'client',
      connectionName: `${this.prefix}:worker-commands`,
      onError: (error) => options.logger.warn({ err: error }, 'redis connection error'),
    });
    const taken = JOB_QUEUES.filter((q) => options.queues?.includes(q.queue) ?? true);
    const perPage = {
      interactive: Math.max(1, Math.floor(options.renderJobsPerPage?.interactive ?? 1)),
      bulk: Math.max(1, Math.floor(options.renderJobsPerPage?.bulk ?? 1)),
    };
    this.queues = taken.map((q) => {
      // As many as the renderer's pages, bulk jobs beside interactive ones too: the renderer keeps a page for
      // interactive renders while clients render, and lets bulk ones use every page when none has for a while
      // (RenderPermits, ADR 0053 and 0059). Render jobs are fetched ahead, `perPage` per page of their kind: the extra
      // ones do their reads while others render, and wait for a page in the queue's fair order (ADR 0054).
      const pages = jobConcurrency(q.job, options.concurrency);
      return { ...q, slots: q.job === 'render-invoice-pdf' ? pages * perPage[q.bulk ? 'bulk' : 'interactive'] : pages };
    });
    for (const q of this.queues) this.taking.set(q.queue, { running: 0, lastStartedAt: 0 });
    this.current = this.makeGeneration();
    this.watchdog = setInterval(() => void this.watch(), this.stall.checkIntervalMs);
    this.watchdog.unref();
  }

  /** Resolves once every worker is connected and taking jobs. */
  async waitUntilReady(): Promise<void> {
    await Promise.all(this.current.workers.map((w) => w.waitUntilReady()));
  }

  /**
   * False once jobs have waited `notLiveAfterMs` while this worker had a free
   * slot and took none, even after its connection was made anew: a process
   * that cannot take jobs must be restarted rather than left running idle.
   */
  live(): boolean {
    return this.stalledSince === null || Date.now() - this.stalledSince < this.stall.notLiveAfterMs;
  }

  /** The watchdog's view, for the health answer and the tests. */
  stallState(): { stalledMs: number | null; recreations: number; checks: number } {
    return { stalledMs: this.stalledSince === null ? null : Date.now() - this.stalledSince, recreations: this.recreations, checks: this.checks };
  }

  /** One connection (BullMQ duplicates it for each worker's blocking reads) and a BullMQ worker per queue taken on it. */
  protected makeGeneration(): Generation {
    const { options, prefix } = this;
    const logger = options.logger;
    const connection = createRedis(options.redis, {
      role: 'blocking',
      connectionName: `${prefix}:worker`,
      onError: (error) => logger.warn({ err: error }, 'redis connection error'),
    });
    const workers = this.queues.map(({ queue: queueName, bulk, slots }) => {
      const keys = { toKey: (type: string) => `${prefix}:${queueName}:${type}` };
      const worker = new (bullmq().Worker)(queueName, (job: Job) => this.process(job, queueName, keys, bulk), {
        connection,
        prefix,
        // Each queue in slots of its own: WORKER_CONCURRENCY renders, more of the light file stores (jobConcurrency).
        concurrency: slots,
        lockDuration: options.lockDurationMs ?? 10_000,
        stalledInterval: Math.max(500, Math.floor((options.lockDurationMs ?? 10_000) / 2)),
        // The autorun loop starts with the process; nothing waits for a separate run() call.
        autorun: true,
        telemetry: options.telemetry,
      });
      worker.on('error', (error) => logger.error({ err: error, queue: worker.name }, 'worker error'));
      return worker;
    });
    return { connection, workers };
  }

  /**
   * The stall watchdog. BullMQ leaves reconnecting to ioredis, and after a
   * Sentinel failover a worker's blocking connection has been seen left for
   * good in a state it never leaves (BullMQ #4378, #3088): the process runs,
   * jobs wait, none is taken. What counts is the effect, whatever the cause:
   * jobs waiting while this worker has a free slot for them and takes none.
   * Then the workers are made anew on a new connection; if that does not
   * help either, live() turns false.
   */
  private async watch(): Promise<void> {
    if (this.watching || this.closing) return;
    this.watching = true;
    try {
      // Our own command connection must not be the one left behind.
      if (this.commands.status === 'end') this.commands.connect().catch(() => undefined);
      const starved = await this.starvedQueues();
      if (starved !== null) this.checks += 1;
      const now = Date.now();
      if (starved === null || starved.length === 0) {
        // Nothing waits for a free slot, or Redis cannot be asked: an outage, which a new connection would not end
        // and a restart neither; the stall is counted again from when Redis answers.
        if (this.stalledSince !== null && starved !== null)
          this.options.logger.info({ stalledMs: now - this.stalledSince, recreations: this.recreations }, 'worker takes jobs again');
        this.stalledSince = null;
        this.reportedNotLive = false;
        return;
      }
      this.stalledSince ??= now;
      const since = Math.max(this.stalledSince, this.recreatedAt ?? 0);
      if (now - since >= this.stall.recreateAfterMs) {
        this.options.logger.error(
          { queues: starved, stalledMs: now - this.stalledSince, recreations: this.recreations + 1 },
          'jobs wait while this worker has free slots and takes none: making its Redis connection and workers anew',
        );
        this.recreate();
      }
      if (!this.live() && !this.reportedNotLive) {
        this.reportedNotLive = true;
        this.options.logger.error({ stalledMs: now - this.stalledSince, recreations: this.recreations }, 'worker still takes no jobs: reporting not live');
      }
    } finally {
      this.watching = false;
    }
  }

  /**
   * Queues with jobs waiting for a slot this worker has free, where no job
   * started since the stall began; null when Redis cannot be asked now.
   */
  private async starvedQueues(): Promise<string[] | null> {
    if (this.commands.status !== 'ready') return null;
    const queues = this.queues.map((q) => ({ name: q.queue, slots: q.slots }));
    let counts: number[];
    try {
      const pipeline = this.commands.pipeline();
      for (const q of queues) pipeline.llen(`${this.prefix}:${q.name}:wait`).zcard(`${this.prefix}:${q.name}:prioritized`);
      const replies = (await pipeline.exec()) ?? [];
      if (replies.some(([error]) => error)) return null;
      counts = replies.map(([, value]) => Number(value));
    } catch {
      return null;
    }
    const since = this.stalledSince ?? Date.now() - this.stall.checkIntervalMs;
    return queues
      .filter((q, i) => {
        const waiting = counts[2 * i]! + counts[2 * i + 1]!;
        const taking = this.taking.get(q.name)!;
        return waiting > 0 && taking.running < q.slots && taking.lastStartedAt < since;
      })
      .map((q) => q.name);
  }

  /** New workers on a new connection at once; the old ones finish their running jobs (bounded) and close. */
  private recreate(): void {
    const old = this.current;
    this.current = this.makeGeneration();
    this.recreations += 1;
    this.recreatedAt = Date.now();
    const retired = this.retire(old).finally(() => this.retiring.delete(retired));
    this.retiring.add(retired);
  }

  private async retire(generation: Generation): Promise<void> {
    await Promise.all(generation.workers.map((worker) => this.closeWorker(worker)));
    const redis = generation.connection;
    if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  }

  /**
   * Stops taking jobs and lets running ones finish; past the bound they are
   * left for BullMQ's stalled-job check, which gives them to another worker.
   */
  async close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async process(job: Job, queue: string, keys: { toKey(type: string): string }, bulkQueue: boolean): Promise<unknown> {
    const name = job.name as JobName;
    // Read for the log only, as text: the payload is checked by the handler (parseJobPayload) before anything uses it.
    const requestId = (job.data as { requestId?: unknown } | null)?.requestId;
    const log = this.options.logger.child({
      requestId: typeof requestId === 'string' ? requestId.slice(0, 128) : undefined,
      jobId: job.id,
      queue,
      job: name,
      attempt: job.attemptsMade + 1,
    });
    // The queue's fair virtual time moves on to this job's tag when it truly starts: a render job when it gets its page
    // (a job fetched ahead that still waits must not make a newcomer's tag later than its own: ADR 0054), or when
    // it ends without one (a cached PDF); any other job now. Off the job's path: a lost update only makes the next
    // jobs' shares less exact, never wrong.
    // A render job is noted as waiting meanwhile, so that the tags do not start over under it (fairFetched). Both on
    // the same connection, in this order.
    const fetchedId = job.id ?? '';
    let started = false;
    const markStarted = () => {
      if (started) return;
      started = true;
      fairStarted(this.commands, keys, job.opts.priority, fetchedId).catch((error: unknown) => log.warn({ err: error }, 'fair share not updated'));
    };
    if (name !== 'render-invoice-pdf') markStarted();
    else fairFetched(this.commands, keys, job.opts.priority, fetchedId).catch((error: unknown) => log.warn({ err: error }, 'fair share not updated'));
    const handler = this.options.handlers[name] as JobHandler<JobName> | undefined;
    if (!handler) {
      log.error('unknown job name');
      throw new (bullmq().UnrecoverableError)(`Unknown job name: ${name}`);
    }
    const startedAt = Date.now();
    if (job.attemptsMade === 0) this.options.onFirstStart?.({ queue, waitedMs: Math.max(0, startedAt - job.timestamp), fair: fairClassOf(job.opts.priority) });
    const taking = this.taking.get(queue);
    if (taking) {
      taking.running += 1;
      taking.lastStartedAt = startedAt;
    }
    log.info('job started');
    try {
      // An export's render, from its own queue or (added by a release before ADR 0053) by its priority: the renderer
      // keeps a page for interactive renders beside it while clients render (ADR 0059). Its priority is its rank for a
      // page (ADR 0054).
      const facts = { bulk: bulkQueue || isBulkPriority(job.opts.priority), rank: job.opts.priority, onPage: markStarted };
      // BullMQ counts every start, a stalled job's restart included: only the first may skip a retry's checks.
      // A render's PDF goes to its API before the job ends (ADR 0057), so the answer does not wait for the cache write.
      const run: JobRun = {
        firstRun: job.attemptsStarted <= 1,
        ...(name === 'render-invoice-pdf' ? { handOverPdf: (result, pdf) => handOverPdf(this.commands, this.prefix, job, result, pdf) } : {}),
      };
      const result = await runAsRenderWork(facts, () => handler(job.data as never, run));
      // A PDF the cache could not keep: after a hand-over the API has answered and hears nothing of it, so it is told here.
      const cacheError = (result as { cacheError?: unknown } | null)?.cacheError;
      if (typeof cacheError === 'string') log.warn({ durationMs: Date.now() - startedAt, cacheError }, 'job completed; its PDF was not kept in the cache');
      else log.info({ durationMs: Date.now() - startedAt }, 'job completed');
      return result;
    } catch (error) {
      const durationMs = Date.now() - startedAt;
      // A forged or damaged job: logged with the rules it broke, never its values, and never tried again (ADR 0050).
      if (error instanceof InvalidJobPayloadError) {
        log.warn({ durationMs, code: error.code, issues: error.issues }, 'job payload refused');
        throw new (bullmq().UnrecoverableError)(encodeDomainError(error));
      }
      // A passing outage may heal before the next try; any other domain error will not.
      if (error instanceof DomainError && !(error instanceof ServiceUnavailableError)) {
        log.info({ durationMs, code: error.code }, 'job ended with a domain error');
        throw new (bullmq().UnrecoverableError)(encodeDomainError(error));
      }
      log.error({ durationMs, err: error }, 'job failed');
      // The last try of a job that met an outage: the caller hears "unavailable" (503, try again), not "failed".
      const lastTry = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (lastTry && (error instanceof ServiceUnavailableError || isTransientInfrastructureError(error))) {
        const reason = error instanceof ServiceUnavailableError ? error.reason : 'a dependency of the worker is unavailable';
        throw new (bullmq().UnrecoverableError)(encodeDomainError(new ServiceUnavailableError(reason)));
      }
      throw error;
    } finally {
      markStarted();
      if (taking) taking.running -= 1;
    }
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.watchdog);
    await Promise.all([this.retire(this.current), ...this.retiring]);
    const redis = this.commands;
    if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  }

  /** Lets its running jobs finish within the bound; past it they are left for BullMQ's stalled-job check. */
  private async closeWorker(worker: Worker): Promise<void> {
    const timeoutMs = this.options.closeTimeoutMs ?? 20_000;
    const finished = await withTimeout(
      worker.close().then(() => true),
      timeoutMs,
      { onTimeout: () => false },
    ).catch(() => false);
    if (!finished) {
      this.options.logger.warn({ queue: worker.name, timeoutMs }, 'running jobs did not finish in time; handing them back');
      // close() is already under way and cannot be forced any more; cutting Redis ends it.
      // (BullMQ's disconnect waits for a first connect, so it gets a bound of its own.)
      await withTimeout(
        worker.disconnect().catch(() => undefined),
        2_000,
        { onTimeout: () => undefined, unref: true },
      );
    }
  }
}
