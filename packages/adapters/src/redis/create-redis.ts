import { Redis, type RedisOptions } from 'ioredis';

export interface CreateRedisOptions {
  /**
   * `client`: request-path commands (rate limits, adding jobs). A dead Redis
   * must answer at once, so nothing is queued while disconnected and each
   * command is bounded.
   * `blocking`: BullMQ workers and queue events, which park on blocking
   * commands; BullMQ requires `maxRetriesPerRequest: null` there and a
   * command timeout would cut their long polls.
   */
  role: 'client' | 'blocking';
  /** Shown by `CLIENT LIST`, so an operator can tell the connections apart. */
  connectionName?: string;
  /** ms to establish a connection before it counts as failed (default 3000). */
  connectTimeoutMs?: number;
  /** ms a command may take on a `client` connection (default 2000). */
  commandTimeoutMs?: number;
  /** Called with connection errors; ioredis reconnects by itself, so these are reports, not failures. */
  onError?: (error: Error) => void;
}

/**
 * The one place Redis connections are made. Every connection reconnects on
 * its own, forever, with a backoff capped at 2 s: a Redis restart heals
 * without a process restart.
 */
export function createRedis(url: string, options: CreateRedisOptions): Redis {
  const common: RedisOptions = {
    connectTimeout: options.connectTimeoutMs ?? 3_000,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2_000),
    connectionName: options.connectionName,
  };
  const byRole: RedisOptions =
    options.role === 'client'
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: options.commandTimeoutMs ?? 2_000 }
      : { maxRetriesPerRequest: null, enableOfflineQueue: true };
  const redis = new Redis(url, { ...common, ...byRole });
  // Without a listener ioredis prints every failed reconnect as "Unhandled error event".
  redis.on('error', options.onError ?? (() => undefined));
  return redis;
}

/**
 * True when `redis` is ready now or becomes ready within `graceMs` while a
 * connect is under way (just after start, or mid-reconnect). A `client`
 * connection refuses commands until then, so callers that may run right
 * after start (readiness checks, the first job) wait here first; a refused
 * connect ends the wait at once.
 */
export function whenRedisReady(redis: Redis, graceMs: number): Promise<boolean> {
  const status = redis.status;
  if (status === 'ready') return Promise.resolve(true);
  if (status !== 'connecting' && status !== 'connect' && status !== 'wait') return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('close', onClose);
      resolve(ok);
    };
    const onReady = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(() => done(false), graceMs);
    redis.on('ready', onReady);
    redis.on('close', onClose);
  });
}
