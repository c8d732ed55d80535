import type { Queue } from 'bullmq';
import { lazyModule } from '../shared/lazy-module.js';
import type { Redis } from 'ioredis';
import { withTimeout } from '@logi/domain';
import type { RedisEndpoint } from '@logi/config';
import { createRedis, whenRedisReady } from '../redis/create-redis.js';
import { DEFAULT_QUEUE_PREFIX, JOB_QUEUES } from './job-queue-names.js';
import { INTERACTIVE_SCORES } from './fair-priority.js';

const bullmq = lazyModule<typeof import('bullmq')>('bullmq');

/** The job states an operator watches: a growing `waiting` means too few workers, `failed` means trouble. */
export const WATCHED_JOB_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
export type WatchedJobState = (typeof WATCHED_JOB_STATES)[number];

/** Waiting jobs read for the oldest one's age (see oldestWaiting). */
const OLDEST_SCAN = 1_000;

/** Jobs per state, per queue name (`pdf`, `uploads`, `pdf-bulk`). */
export type QueueJobCounts = Record<string, Record<WatchedJobState, number>>;

export interface BullmqQueueInspectorOptions {
  /** A redis:// URL, or a Sentinel group (createRedis). */
  redis: RedisEndpoint | string;
  /** Key prefix of the queues (REDIS_PREFIX), the same as the API's and the workers'. */
  prefix?: string;
  /** Connection errors; the connection reconnects by itself. */
  onError?: (error: Error) => void;
}

/**
 * Read-side handles on every job queue, for operators: job counts (queue
 * depth metrics) and the Queue objects the dashboard drives. It has its own
 * fail-fast connection, so a dead or slow Redis answers an error quickly
 * instead of holding a scrape or a dashboard page.
 */
export class BullmqQueueInspector {
  readonly queues: readonly Queue[];
  private readonly client: Redis;
  private closing: Promise<void> | null = null;

  constructor(options: BullmqQueueInspectorOptions) {
    const prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
    const onError = options.onError ?? (() => undefined);
    this.client = createRedis(options.redis, { role: 'client', connectionName: `${prefix}:api-inspector`, onError });
    this.queues = JOB_QUEUES.map(({ queue: name }) => {
      const queue = new (bullmq().Queue)(name, { connection: this.client, prefix });
      // EventEmitter throws on an 'error' nobody listens to; these are reports.
      queue.on('error', onError);
      return queue;
    });
  }

  /** Jobs per state of every queue; rejects when Redis does not answer within `timeoutMs`. */
  async jobCounts(timeoutMs: number): Promise<QueueJobCounts> {
    if (this.closing) throw new Error('queue inspector is closed');
    const startedAt = Date.now();
    if (!(await whenRedisReady(this.client, timeoutMs))) throw new Error('Redis is not connected');
    const counts = Promise.all(
      this.queues.map(async (queue) => {
        // Jobs wait as `prioritized` since renders are shared fairly (ADR 0036); an operator sees them all as waiting.
        const { prioritized = 0, ...counts } = await queue.getJobCounts(...WATCHED_JOB_STATES, 'prioritized');
        return [queue.name, { ...counts, waiting: (counts.waiting ?? 0) + prioritized } as Record<WatchedJobState, number>] as const;
      }),
    );
    const answered = await withTimeout(counts, Math.max(1, timeoutMs - (Date.now() - startedAt)), {
      onTimeout: () => {
        throw new Error(`no answer from Redis within ${timeoutMs} ms`);
      },
    });
    return Object.fromEntries(answered);
  }

  /**
   * Per queue, when the oldest waiting job a request waits for was added (Unix ms), or null when none waits; an
   * export's bulk renders, which wait behind every request by design, are left out. Rejects when Redis does not answer
   * within `timeoutMs`. Looks at the first OLDEST_SCAN jobs in the order they will start: with fair shares (ADR 0036)
   * each backlogged directory's first job is among the first two per directory, and the oldest waiting job is one of
   * those, so the answer is exact unless hundreds of directories have a backlog (then it is a lower bound).
   */
  async oldestWaiting(timeoutMs: number): Promise<Record<string, number | null>> {
    if (this.closing) throw new Error('queue inspector is closed');
    const startedAt = Date.now();
    if (!(await whenRedisReady(this.client, timeoutMs))) throw new Error('Redis is not connected');
    const oldest = Promise.all(
      this.queues.map(async (queue) => {
        // `wait` holds only jobs added without a priority (by a release before fair shares).
        const [prioritized, plain] = await Promise.all([
          this.client.zrangebyscore(queue.toKey('prioritized'), INTERACTIVE_SCORES.min, INTERACTIVE_SCORES.max, 'LIMIT', 0, OLDEST_SCAN),
          this.client.lrange(queue.toKey('wait'), -OLDEST_SCAN, -1),
        ]);
        const ids = [...prioritized, ...plain];
        if (ids.length === 0) return [queue.name, null] as const;
        const pipeline = this.client.pipeline();
        for (const id of ids) pipeline.hget(queue.toKey(id), 'timestamp');
        const stamps = ((await pipeline.exec()) ?? []).map(([, value]) => Number(value)).filter((value) => Number.isFinite(value) && value > 0);
        return [queue.name, stamps.length === 0 ? null : Math.min(...stamps)] as const;
      }),
    );
    const answered = await withTimeout(oldest, Math.max(1, timeoutMs - (Date.now() - startedAt)), {
      onTimeout: () => {
        throw new Error(`no answer from Redis within ${timeoutMs} ms`);
      },
    });
    return Object.fromEntries(answered);
  }

  async close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    // With Redis gone, BullMQ's close would wait for a reconnect; cutting the connection first ends it.
    if (this.client.status !== 'ready') this.client.disconnect();
    await withTimeout(Promise.allSettled(this.queues.map((queue) => queue.close())), 3_000, { onTimeout: () => undefined, unref: true });
    // The connection is ours (BullMQ leaves caller-made clients open).
    if (this.client.status === 'ready') await this.client.quit().catch(() => this.client.disconnect());
    else this.client.disconnect();
  }
}
