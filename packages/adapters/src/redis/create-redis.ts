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
