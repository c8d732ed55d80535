import type { EventEmitter } from 'node:events';
import type { Queue, QueueEvents, Telemetry } from 'bullmq';
import { lazyModule } from '../shared/lazy-module.js';
import type { Redis } from 'ioredis';
import {
  JobOutcomeUnknownError,
  parseJobPayload,
  ServiceUnavailableError,
  withTimeout,
  type JobName,
  type JobPayloads,
  type JobQueuePort,
  type JobResults,
  type RunJobOptions,
} from '@logi/domain';
import type { RedisEndpoint } from '@logi/config';
import { createRedis, whenRedisReady } from '../redis/create-redis.js';
import { decodeJobFailure } from './job-failure.codec.js';
import { fairPriority } from './fair-priority.js';
import { DEFAULT_QUEUE_PREFIX, queueNameOf } from './job-queue-names.js';
import { handedOverResult, takeHandedOverPdf } from './pdf-hand-over.js';

const bullmq = lazyModule<typeof import('bullmq')>('bullmq');

/** How long a caller waits for a connect that is under way before being told Redis is down. */
const CONNECTING_GRACE_MS = 1_000;

/**
 * How long a lost connection may take to come back before the callers waiting
 * on jobs are told Redis is down. A blip heals within it; an outage does not.
 */
const RECONNECT_GRACE_MS = 1_000;

const CONNECTION_LOST = 'job queue unavailable: Redis connection lost';
const JOB_LOST = 'job queue unavailable: the job is gone from Redis (lost in a failover)';

/** A job's end as its caller sees it; `lost` when Redis no longer knows the job. */
interface JobOutcome {
  result?: unknown;
  failedReason?: string;
  lost?: boolean;
}

/**
 * After a reconnect, how often a waiting caller asks Redis for its job's
 * outcome: BullMQ's events reader pauses 5 s after a connection error, and a
 * reader that had seen no event yet resumes at '$', missing what came meanwhile.
 */
const RECHECK_AFTER_RECONNECT_MS = 500;
/**
 * Every wait also asks Redis itself this often, whatever the events stream
 * says: after a Sentinel failover its reader was seen delivering nothing for
 * jobs added once the connections were back, which the workers had finished
 * (docs/reliability.md#redis-failover-sentinel). Most jobs end before the first ask.
 */
const RECHECK_ALWAYS_MS = 1_000;

export interface BullmqJobQueueOptions {
  /** A redis:// URL, or a Sentinel group (createRedis). */
  redis: RedisEndpoint | string;
  /** Key prefix of every queue; tests pass a unique one. */
  prefix?: string;
  /** Tries per job; a domain error is never tried again (the worker makes it unrecoverable). */
  attempts?: number;
  /** First retry delay, doubled on each further try. */
  backoffMs?: number;
  /** How long finished jobs are kept, so a job sent again with the same id answers from the first run. */
  keepCompletedSeconds?: number;
  keepFailedSeconds?: number;
  /** Connection errors (Redis gone); the connections reconnect by themselves. */
  onError?: (error: Error) => void;
  /** With tracing on: each add is a span, and the job carries the trace to the worker that runs it. */
  telemetry?: Telemetry;
}

interface JobChannel {
  queue: Queue;
  events: QueueEvents;
}

/**
 * Sends jobs to worker processes through Redis and waits for the answer.
 * Bounded in every case: Redis down, no worker, a slow job all end in
 * ServiceUnavailableError by the caller's deadline. Payloads hold keys, never
 * file or PDF bytes.
 */
export class BullmqJobQueue implements JobQueuePort {
  private readonly client: Redis;
  private readonly blocking: Redis;
  private readonly prefix: string;
  private readonly onError: (error: Error) => void;
  /** Per queue name, made on first use with Redis up: BullMQ's close hangs on a connection that never became ready. */
  private readonly channels = new Map<string, JobChannel>();
  private closing: Promise<void> | null = null;
  /** Callers waiting on a job, each told when the connection is lost for good. */
  private readonly waiters = new Set<(error: ServiceUnavailableError) => void>();
  private lostTimer: NodeJS.Timeout | null = null;
  /** Waits to switch to asking Redis themselves once a connection has come back. */
  private readonly reconnectWatchers = new Set<() => void>();
  /** When a connection last came back (0: never). */
  private lastReconnectAt = 0;

  constructor(private readonly options: BullmqJobQueueOptions) {
    this.onError = options.onError ?? (() => undefined);
    this.prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
    // Adding jobs goes through a fail-fast connection; the events stream needs a blocking one.
    this.client = createRedis(options.redis, { role: 'client', connectionName: `${this.prefix}:api-queue`, onError: this.onError });
    this.blocking = createRedis(options.redis, { role: 'blocking', connectionName: `${this.prefix}:api-events`, onError: this.onError });
    // One set of listeners for every caller, however many wait at once.
    for (const redis of [this.client, this.blocking]) {
      redis.on('close', this.onConnectionDown);
      redis.on('end', this.onConnectionDown);
      redis.on('ready', this.onConnectionUp);
      // Every 'ready' after the first is a reconnect.
      redis.once('ready', () => redis.on('ready', this.onReconnected));
    }
  }

  async runAndWait<N extends JobName>(name: N, payload: JobPayloads[N], options: RunJobOptions): Promise<JobResults[N]> {
    if (this.closing) throw new ServiceUnavailableError('job queue is closed');
    // Checked when sent as well as where taken (ADR 0050): a payload the workers would refuse never reaches Redis.
    parseJobPayload(name, payload);
    const startedAt = Date.now();
    // A disconnected client would only fail later; answering now spares the caller the wait.
    if (!(await whenRedisReady(this.client, Math.min(options.timeoutMs, CONNECTING_GRACE_MS)))) {
      throw new ServiceUnavailableError('job queue unavailable: Redis is not connected');
    }
    // Bulk renders go on a queue of their own (docs/contribute/decisions/0053-worker-pools.md).
    const { queue, events } = this.channel(queueNameOf(name, options.bulk ?? false));
    // The events stream holds the answer: with its connection gone, waiting for the deadline is pointless.
    const lost = new AbortController();
    const onLost = (error: ServiceUnavailableError) => lost.abort(error);
    this.waiters.add(onLost);
    if (!this.connected) this.onConnectionDown();
    const run = this.addAndWait(queue, events, name, payload, options);
    try {
      return await withTimeout(run, options.timeoutMs - (Date.now() - startedAt), {
        onTimeout: () => {
          throw new ServiceUnavailableError('job timed out');
        },
        signal: lost.signal,
      });
    } catch (error) {
      if (error instanceof ServiceUnavailableError && error.reason === 'job timed out') {
        // Nobody waits for it any more: take it back if no worker has started it.
        await this.withdraw(queue, options.jobId);
      }
      throw error;
    } finally {
      this.waiters.delete(onLost);
    }
  }

  /** Throws when Redis does not answer (readiness). */
  async ping(): Promise<void> {
    if (this.closing) throw new ServiceUnavailableError('job queue is closed');
    try {
      await whenRedisReady(this.client, CONNECTING_GRACE_MS);
      await this.client.ping();
    } catch (error) {
      // A command that timed out may still have added the job.
      throw new JobOutcomeUnknownError(`job queue unavailable: ${reasonOf(error)}`);
    }
  }

  async close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private get connected(): boolean {
    return this.client.status === 'ready' && this.blocking.status === 'ready';
  }

  /** A connection dropped (or is not up yet): if it is not back within the grace, the waiting callers are answered. */
  private readonly onConnectionDown = (): void => {
    if (this.lostTimer || this.waiters.size === 0) return;
    this.lostTimer = setTimeout(() => {
      this.lostTimer = null;
      if (this.connected) return;
      // The job may still run (a worker needs no events stream to finish it): its outcome is unknown here.
      const error = new JobOutcomeUnknownError(CONNECTION_LOST);
      for (const reject of this.waiters) reject(error);
      this.waiters.clear();
    }, RECONNECT_GRACE_MS);
    this.lostTimer.unref();
  };

  private readonly onReconnected = (): void => {
    this.lastReconnectAt = Date.now();
    for (const watcher of this.reconnectWatchers) watcher();
  };

  private readonly onConnectionUp = (): void => {
    if (this.lostTimer && this.connected) {
      clearTimeout(this.lostTimer);
      this.lostTimer = null;
    }
  };

  private channel(queueName: string): JobChannel {
    let channel = this.channels.get(queueName);
    if (!channel) {
      const { telemetry } = this.options;
      // Made during a request: the events reader's endless loop must not run inside that request's trace.
      const { queue, events } = bullmq().withDetachedContext(telemetry, () => ({
        queue: new (bullmq().Queue)(queueName, { connection: this.client, prefix: this.prefix, telemetry }),
        events: new (bullmq().QueueEvents)(queueName, { connection: this.blocking, prefix: this.prefix }),
      }));
      // EventEmitter throws on an 'error' nobody listens to; these are reports, the deadline decides.
      queue.on('error', this.onError);
      events.on('error', this.onError);
      channel = { queue, events };
      this.channels.set(queueName, channel);
    }
    return channel;
  }

  private async addAndWait<N extends JobName>(
    queue: Queue,
    events: QueueEvents,
    name: N,
    payload: JobPayloads[N],
    options: RunJobOptions,
  ): Promise<JobResults[N]> {
    const started = Date.now();
    let job;
    try {
      // The events stream must be read before the job can finish, or its answer could be missed.
      await events.waitUntilReady();
      // The job's place among the directories' jobs (docs/contribute/decisions/0036-fair-render-scheduling.md).
      const place = await fairPriority(this.client, queue, payload.directory, options.bulk ?? false);
      job = await queue
        .add(name, payload, {
          jobId: options.jobId,
          priority: place.priority,
          attempts: this.options.attempts ?? 3,
          backoff: { type: 'exponential', delay: this.options.backoffMs ?? 500 },
          removeOnComplete: { age: this.options.keepCompletedSeconds ?? 3600 },
          removeOnFail: { age: this.options.keepFailedSeconds ?? 24 * 3600 },
        })
        .finally(() => place.settled());
    } catch (error) {
      // A command that timed out may still have added the job.
      throw new JobOutcomeUnknownError(`job queue unavailable: ${reasonOf(error)}`);
    }
    // A little past the caller's deadline: ours fires first, this one only unhooks the listeners.
    const ttl = Math.max(1, options.timeoutMs - (Date.now() - started)) + 250;
    const outcome = await this.outcomeOf(queue, events, job.id ?? options.jobId, ttl);
    // A worker may have taken it before the loss and may still store what it was given: the outcome is unknown.
    if (outcome.lost) throw new JobOutcomeUnknownError(JOB_LOST);
    if (outcome.failedReason !== undefined) throw decodeJobFailure(outcome.failedReason);
    return outcome.result as JobResults[N];
  }

  /**
   * Waits for the job's completed or failed event, asking Redis itself once and after each reconnect, in place of
   * Job.waitUntilFinished, whose Redis cut stops the process (docs/contribute/decisions/0035-waiting-for-a-bullmq-job.md).
   */
  private outcomeOf(queue: Queue, events: QueueEvents, jobId: string, ttl: number): Promise<JobOutcome> {
    // BullMQ emits per-job events (`completed:<id>`) that its typings do not list.
    const emitter = events as unknown as EventEmitter;
    return new Promise((resolve) => {
      const completedEvent = `completed:${jobId}`;
      const failedEvent = `failed:${jobId}`;
      const progressEvent = `progress:${jobId}`;
      let settled = false;
      let recheck: NodeJS.Timeout | null = null;
      const waitStartedAt = Date.now();
      const settle = (outcome: JobOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(steadyCheck);
        if (recheck) clearInterval(recheck);
        this.reconnectWatchers.delete(onReconnect);
        emitter.off(completedEvent, onCompleted);
        emitter.off(failedEvent, onFailed);
        emitter.off(progressEvent, onProgress);
        resolve(outcome);
      };
      const onCompleted = (args: { returnvalue: unknown }) => settle({ result: args.returnvalue });
      const onFailed = (args: { failedReason: string }) => settle({ failedReason: args.failedReason });
      // A render job's PDF handed over before its end (ADR 0057); one that cannot be taken leaves the answer to the end.
      const onProgress = (args: { data?: unknown }) => {
        const handed = handedOverResult(args.data);
        if (!handed) return;
        takeHandedOverPdf(this.client, this.prefix, jobId, handed.bytes).then(
          (pdf) => pdf && settle({ result: { ...handed, pdf } }),
          () => undefined,
        );
      };
      const check = (afterReconnect: boolean) =>
        this.finishedAlready(queue, jobId, afterReconnect).then(
          (outcome) => outcome && settle(outcome),
          // Redis trouble: the caller's deadline or the lost-connection watch answers.
          () => undefined,
        );
      // Events sent around a reconnect may come late or never: from then on, this wait asks Redis itself.
      const onReconnect = () => {
        if (recheck || settled) return;
        void check(true);
        recheck = setInterval(() => void check(true), RECHECK_AFTER_RECONNECT_MS);
        recheck.unref();
      };
      const timer = setTimeout(() => settle({ failedReason: `no answer within ${ttl} ms` }), ttl);
      // Not only after a reconnect this wait saw: the events can miss a job added just after one.
      const steadyCheck = setInterval(() => void check(this.lastReconnectAt >= waitStartedAt), RECHECK_ALWAYS_MS);
      steadyCheck.unref();
      emitter.on(completedEvent, onCompleted);
      emitter.on(failedEvent, onFailed);
      emitter.on(progressEvent, onProgress);
      this.reconnectWatchers.add(onReconnect);
      void check(false);
    });
  }

  private async finishedAlready(queue: Queue, jobId: string, afterReconnect: boolean): Promise<JobOutcome | null> {
    // The state first: once it reads finished, the job's hash already holds the outcome.
    const state = await queue.getJobState(jobId);
    // Right after add() the job is surely there; only a reconnect (to another master) can have lost it.
    if (state === 'unknown' && afterReconnect) return { lost: true };
    if (state !== 'completed' && state !== 'failed') return null;
    const job = await bullmq().Job.fromId(queue, jobId);
    if (!job) return null;
    return state === 'completed' ? { result: job.returnvalue } : { failedReason: job.failedReason };
  }

  private async withdraw(queue: Queue, jobId: string): Promise<void> {
    // A job a worker holds is locked and stays; one still waiting is removed.
    await withTimeout(
      queue.remove(jobId).catch(() => 0),
      500,
      { onTimeout: () => 0, unref: true },
    );
  }

  private async shutdown(): Promise<void> {
    // With Redis gone, BullMQ's close would wait for a reconnect; cutting our connections first ends it.
    if (this.client.status !== 'ready' || this.blocking.status !== 'ready') {
      this.client.disconnect();
      this.blocking.disconnect();
    }
    const closers = [...this.channels.values()].flatMap(({ queue, events }) => [events.close(), queue.close()]);
    await withTimeout(Promise.allSettled(closers), 3_000, { onTimeout: () => undefined, unref: true });
    // The connections are ours (BullMQ leaves caller-made clients open).
    for (const redis of [this.client, this.blocking]) {
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    }
  }
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown error';
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error.message;
}
