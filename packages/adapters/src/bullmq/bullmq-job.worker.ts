import type { Job, Telemetry, Worker } from 'bullmq';
import { lazyModule } from '../shared/lazy-module.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  DomainError,
  InvalidJobPayloadError,
  JOB_NAMES,
  jobConcurrency,
  ServiceUnavailableError,
  withTimeout,
  type JobHandler,
  type JobHandlers,
  type JobName,
} from '@logi/domain';
import type { RedisEndpoint } from '@logi/config';
import { createRedis } from '../redis/create-redis.js';
import { isTransientInfrastructureError } from '../shared/transient-errors.js';
import { encodeDomainError } from './job-failure.codec.js';
import { fairStarted } from './fair-priority.js';
import { DEFAULT_QUEUE_PREFIX, QUEUE_NAME_BY_JOB } from './job-queue-names.js';

const bullmq = lazyModule<typeof import('bullmq')>('bullmq');

export interface BullmqJobWorkerOptions {
  /** A redis:// URL, or a Sentinel group (createRedis). */
  redis: RedisEndpoint | string;
  handlers: JobHandlers;
  /** WORKER_CONCURRENCY: renders this worker runs at once (more file stores: `jobConcurrency`). */
  concurrency: number;
  logger: Logger;
  prefix?: string;
  /** Lock on a running job; a dead worker's jobs go to another after it expires (checked every half of it). */
  lockDurationMs?: number;
  /** How long close() lets running jobs finish before handing them back. */
  closeTimeoutMs?: number;
  /** With tracing on: each job runs in a span that continues the trace the job was added in. */
  telemetry?: Telemetry;
}

/**
 * Takes jobs from every queue and runs the shared job handlers. The processor
 * is a thin adapter; what it adds is the retry rule: a domain error will fail
 * the same way again, so it ends the job at once, carrying its code back; an
 * outage is tried again, and reported as one when the tries run out.
 */
export class BullmqJobWorker {
  private readonly connection: Redis;
  /** Commands of our own (the fair shares' virtual time); BullMQ may block on the workers' connection. */
  private readonly commands: Redis;
  private readonly workers: Worker[];
  private closing: Promise<void> | null = null;

  constructor(private readonly options: BullmqJobWorkerOptions) {
    const prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
    const logger = options.logger;
    this.connection = createRedis(options.redis, {
      role: 'blocking',
      connectionName: `${prefix}:worker`,
      onError: (error) => logger.warn({ err: error }, 'redis connection error'),
    });
    this.commands = createRedis(options.redis, {
      role: 'client',
      connectionName: `${prefix}:worker-commands`,
      onError: (error) => logger.warn({ err: error }, 'redis connection error'),
    });
    this.workers = JOB_NAMES.map((name) => {
      const queueName = QUEUE_NAME_BY_JOB[name];
      const keys = { toKey: (type: string) => `${prefix}:${queueName}:${type}` };
      const worker = new (bullmq().Worker)(queueName, (job: Job) => this.process(job, queueName, keys), {
        connection: this.connection,
        prefix,
        // Each kind in slots of its own: WORKER_CONCURRENCY renders, more of the light file stores (jobConcurrency).
        concurrency: jobConcurrency(name, options.concurrency),
        lockDuration: options.lockDurationMs ?? 10_000,
        stalledInterval: Math.max(500, Math.floor((options.lockDurationMs ?? 10_000) / 2)),
        // The autorun loop starts with the process; nothing waits for a separate run() call.
        autorun: true,
        telemetry: options.telemetry,
      });
      worker.on('error', (error) => logger.error({ err: error, queue: worker.name }, 'worker error'));
      return worker;
    });
  }

  /** Resolves once every worker is connected and taking jobs. */
  async waitUntilReady(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
  }

  /**
   * Stops taking jobs and lets running ones finish; past the bound they are
   * left for BullMQ's stalled-job check, which gives them to another worker.
   */
  async close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async process(job: Job, queue: string, keys: { toKey(type: string): string }): Promise<unknown> {
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
    // Off the job's path: a lost update only makes the next jobs' shares less exact, never wrong.
    fairStarted(this.commands, keys, job.opts.priority).catch((error: unknown) => log.warn({ err: error }, 'fair share not updated'));
    const handler = this.options.handlers[name] as JobHandler<JobName> | undefined;
    if (!handler) {
      log.error('unknown job name');
      throw new (bullmq().UnrecoverableError)(`Unknown job name: ${name}`);
    }
    const started = Date.now();
    log.info('job started');
    try {
      const result = await handler(job.data as never);
      log.info({ durationMs: Date.now() - started }, 'job completed');
      return result;
    } catch (error) {
      const durationMs = Date.now() - started;
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
    }
  }

  private async shutdown(): Promise<void> {
    const timeoutMs = this.options.closeTimeoutMs ?? 20_000;
    await Promise.all(
      this.workers.map(async (worker) => {
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
      }),
    );
    for (const redis of [this.connection, this.commands]) {
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    }
  }
}
