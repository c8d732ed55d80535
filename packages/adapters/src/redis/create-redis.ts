import { Redis, type RedisOptions } from 'ioredis';
import type { RedisEndpoint } from '@logi/config';

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

/** How long a Sentinel may take to answer "where is the master?" before the next one is asked. */
const SENTINEL_COMMAND_TIMEOUT_MS = 1_000;

/**
 * The one place Redis connections are made: each reconnects on its own, forever, and with Sentinel follows the master
 * through a failover without a process restart (docs/contribute/decisions/0032-redis-connections-follow-sentinel.md).
 */
export function createRedis(endpoint: RedisEndpoint | string, options: CreateRedisOptions): Redis {
  const where: RedisEndpoint = typeof endpoint === 'string' ? { url: endpoint } : endpoint;
  const common: RedisOptions = {
    connectTimeout: options.connectTimeoutMs ?? 3_000,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2_000),
    connectionName: options.connectionName,
  };
  const byRole: RedisOptions =
    options.role === 'client'
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: options.commandTimeoutMs ?? 2_000 }
      : { maxRetriesPerRequest: null, enableOfflineQueue: true };
  const redis = 'sentinels' in where ? sentinelRedis(where, { ...common, ...byRole }, options.role) : new Redis(where.url, { ...common, ...byRole });
  // Without a listener ioredis prints every failed reconnect as "Unhandled error event".
  redis.on('error', options.onError ?? (() => undefined));
  reconnectWhenEndedByItself(redis, options.onError);
  return redis;
}

/** First pause before connecting again a connection that ended by itself; doubled each time, up to the retry strategy's 2 s. */
const REVIVE_FIRST_DELAY_MS = 100;
const REVIVE_MAX_DELAY_MS = 2_000;

/**
 * ioredis ends a connection for good ('end', no retry) when its connect
 * fails before a socket exists: with Sentinel, a disconnect while it is
 * still asking the sentinels for the master does that, and its own failover
 * detector sends one on `+switch-master`, so a failover that catches a
 * connection mid-reconnect leaves it dead while the process runs on
 * (ioredis' retryStrategy is never asked; BullMQ #4378). Seen here: the
 * API's queue connections ended 3 s after a master was killed and every PDF
 * was answered 503 until a restart (docs/reliability.md#redis-failover-sentinel).
 * So a connection that ends without its owner closing it is connected again.
 */
function reconnectWhenEndedByItself(redis: Redis, onError?: (error: Error) => void): void {
  // ioredis ends a connection in two ways. Through its close handler ('close', then 'end'): only when its owner closed
  // it, since our retry strategy always answers a delay. Straight from a failed connect ('end' with no 'close' before
  // it): the owner's disconnect() during a connect does that too, and then leaves ioredis' `manuallyClosing` set.
  let closedFirst = false;
  let revivals = 0;
  redis.on('close', () => (closedFirst = true));
  for (const status of ['connecting', 'connect', 'ready']) redis.on(status, () => (closedFirst = false));
  redis.on('ready', () => (revivals = 0));
  redis.on('end', () => {
    if (closedFirst || (redis as unknown as { manuallyClosing?: boolean }).manuallyClosing) return;
    const delayMs = Math.min(REVIVE_FIRST_DELAY_MS * 2 ** Math.min(revivals, 5), REVIVE_MAX_DELAY_MS);
    revivals += 1;
    onError?.(new Error(`the Redis connection ended by itself (ioredis' terminal state); connecting again in ${delayMs} ms`));
    setTimeout(() => {
      if (redis.status === 'end' && !(redis as unknown as { manuallyClosing?: boolean }).manuallyClosing) redis.connect().catch(() => undefined);
    }, delayMs).unref();
  });
}

function sentinelRedis(endpoint: Extract<RedisEndpoint, { sentinels: unknown }>, base: RedisOptions, role: CreateRedisOptions['role']): Redis {
  const tls = endpoint.url?.startsWith('rediss:') ?? false;
  const sentinelOptions: RedisOptions = {
    ...base,
    sentinels: endpoint.sentinels,
    name: endpoint.name,
    role: 'master',
    // A sentinel that accepts the connection and then hangs must not hold up the search for the master.
    sentinelCommandTimeout: SENTINEL_COMMAND_TIMEOUT_MS,
    // Every sentinel down: ask again every second, forever (the servers may still be there, to be found later).
    sentinelRetryStrategy: (times) => Math.min(times * 100, 1_000),
    failoverDetector: true,
    // REDIS_URL's rediss: applies to the master's connection; the sentinels are asked in plain TCP.
    enableTLSForSentinelMode: tls,
    // A request-path command fails at once (the caller answers 503); a blocking connection's command is sent again to the new master.
    reconnectOnError: (error) => (error.message.includes('READONLY') ? (role === 'client' ? 1 : 2) : false),
  };
  // The URL gives user, password, database and TLS; ioredis ignores its host and port when sentinels are set.
  return endpoint.url ? new Redis(endpoint.url, sentinelOptions) : new Redis(sentinelOptions);
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
