import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ServiceUnavailableError, type IdempotencyClaim, type IdempotencyScope, type IdempotencyStorePort } from '@logi/domain';
import { whenRedisReady } from './create-redis.js';

/** What one key holds: the fingerprint digest and either the running request's token or the kept answer. */
interface KeyRecord {
  f: string;
  t?: string;
  a?: unknown;
}

/** Replaces the record with `ARGV[2]` for `ARGV[3]` ms, or removes it (no ARGV[2]), only while token ARGV[1] holds it. */
const IF_HELD = `
local value = redis.call('GET', KEYS[1])
if not value then return 0 end
local ok, record = pcall(cjson.decode, value)
if not ok or record.t ~= ARGV[1] then return 0 end
if ARGV[2] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) else redis.call('DEL', KEYS[1]) end
return 1
`;

const MAX_ROUNDS = 5;
const READY_GRACE_MS = 1_000;

/**
 * Idempotency keys in Redis, shared by every API process: the first request
 * takes a key with `SET NX PX` (the lock runs out by itself if its process
 * dies), and its answer replaces the lock with a 24 h TTL. Redis errors
 * become `ServiceUnavailableError` (503): a key that cannot be checked is
 * never ignored.
 */
export class RedisIdempotencyStore implements IdempotencyStorePort {
  constructor(
    private readonly redis: Redis,
    /** Prefix of every key (REDIS_PREFIX). */
    private readonly prefix: string,
  ) {}

  /** The Redis key of a directory's idempotency key: a digest, so any key and directory fit and cannot collide. */
  redisKey(scope: IdempotencyScope): string {
    const digest = createHash('sha256')
      .update(JSON.stringify([scope.directory, scope.key]))
      .digest('hex');
    return `${this.prefix}:idempotency:${digest}`;
  }

  async claim(scope: IdempotencyScope, fingerprint: string, lockMs: number): Promise<IdempotencyClaim> {
    const key = this.redisKey(scope);
    const f = createHash('sha256').update(fingerprint).digest('hex');
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const token = randomUUID();
      const taken = await this.command(() => this.redis.set(key, JSON.stringify({ f, t: token } satisfies KeyRecord), 'PX', lockMs, 'NX'));
      if (taken === 'OK') return { kind: 'claimed', token };
      const raw = await this.command(() => this.redis.get(key));
      // Released or run out between the two commands: try to take it again.
      if (raw === null) continue;
      const record = JSON.parse(raw) as KeyRecord;
      if (record.f !== f) return { kind: 'mismatch' };
      if (record.t === undefined) return { kind: 'replay', answer: record.a };
      return { kind: 'in-flight' };
    }
    throw new ServiceUnavailableError('idempotency key changed hands too often', 1);
  }

  async complete(scope: IdempotencyScope, token: string, answer: unknown, keepMs: number): Promise<void> {
    const key = this.redisKey(scope);
    const raw = await this.command(() => this.redis.get(key));
    if (raw === null) return;
    const { f } = JSON.parse(raw) as KeyRecord;
    await this.command(() => this.redis.eval(IF_HELD, 1, key, token, JSON.stringify({ f, a: answer } satisfies KeyRecord), keepMs));
  }

  async release(scope: IdempotencyScope, token: string): Promise<void> {
    await this.command(() => this.redis.eval(IF_HELD, 1, this.redisKey(scope), token));
  }

  /**
   * Removes every kept answer and running claim of this prefix (after a database restore: they name rows the restore
   * lost). How many keys were removed.
   */
  async forgetAll(): Promise<number> {
    if (!(await whenRedisReady(this.redis, 5_000))) throw new Error(`Redis is not reachable (${this.redis.status})`);
    let removed = 0;
    const stream = this.redis.scanStream({ match: `${this.prefix}:idempotency:*`, count: 500 });
    for await (const keys of stream as AsyncIterable<string[]>) if (keys.length > 0) removed += await this.redis.unlink(...keys);
    return removed;
  }

  /** Keys carry their own TTL. */
  async deleteExpired(): Promise<number> {
    return 0;
  }

  /** A connection still being made (just after start, mid-reconnect) refuses commands: wait a moment for it first. */
  private async command<T>(run: () => Promise<T>): Promise<T> {
    try {
      if (this.redis.status !== 'ready') await whenRedisReady(this.redis, READY_GRACE_MS);
      return await run();
    } catch (error) {
      throw Object.assign(new ServiceUnavailableError('idempotency store (Redis) unavailable'), { cause: error });
    }
  }
}
