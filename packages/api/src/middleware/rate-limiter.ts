import type { Context } from 'koa';
import ratelimit from 'koa-ratelimit';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Messages } from '@logi/domain';
import { HttpError } from '../http/http-error.js';

const CONNECTING_GRACE_MS = 1_000;

export interface RateLimiterOptions {
  max: number;
  windowSeconds: number;
  /**
   * Shared counters for every API process; memory (this process only) when null.
   * `whenReady` (from the composition root) resolves once the connection takes commands, or after `graceMs`.
   */
  redis: { client: Redis; whenReady: (graceMs: number) => Promise<boolean> } | null;
  logger: Logger;
  /** Key prefix in Redis, so that test runs and deployments do not collide. */
  namespace?: string;
}

/**
 * koa-ratelimit behind one method: count this request under `key`, set the
 * X-RateLimit headers and the IETF RateLimit / RateLimit-Policy fields, throw 429 when over the limit. When Redis fails, the
 * request goes through (fail open) and a warning is logged: a rate limiter
 * that is down must not take the API down with it.
 */
export class RateLimiter {
  private readonly limit: ReturnType<typeof ratelimit>;
  private readonly memory = new Map<string, { reset: number }>();
  private readonly sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly options: RateLimiterOptions) {
    this.limit = ratelimit({
      driver: options.redis ? 'redis' : 'memory',
      db: options.redis?.client ?? this.memory,
      duration: options.windowSeconds * 1000,
      max: options.max,
      namespace: options.namespace ?? 'ratelimit',
      id: (ctx: Context) => ctx.state.rateLimitKey as string,
      headers: { remaining: 'X-RateLimit-Remaining', reset: 'X-RateLimit-Reset', total: 'X-RateLimit-Limit' },
      errorMessage: Messages.TOO_MANY_ATTEMPTS,
      throw: false,
    } as ratelimit.MiddlewareOptions);
    if (!options.redis) {
      // The memory driver never forgets a key on its own; drop expired windows.
      this.sweeper = setInterval(() => this.sweep(), options.windowSeconds * 1000);
      this.sweeper.unref();
    }
  }

  async count(ctx: Context, key: string): Promise<void> {
    ctx.state.rateLimitKey = key;
    // Just after start (or mid-reconnect) the connection refuses commands for a moment: wait a
    // little for it rather than letting those first requests through unlimited.
    if (this.options.redis) await this.options.redis.whenReady(CONNECTING_GRACE_MS);
    try {
      await this.limit(ctx, async () => undefined);
    } catch (error) {
      this.options.logger.warn({ err: error, requestId: ctx.state.requestId }, 'rate limiter unavailable; request let through');
      return;
    }
    // The memory store reports the reset time with a fraction; clients expect whole seconds.
    const reset = Number(ctx.response.get('X-RateLimit-Reset'));
    if (Number.isFinite(reset) && reset > 0) ctx.set('X-RateLimit-Reset', String(Math.ceil(reset)));
    const limited = Boolean(ctx.state.rateLimit);
    const remaining = limited ? 0 : Math.max(0, Number(ctx.response.get('X-RateLimit-Remaining')) || 0);
    // The IETF fields (draft-ietf-httpapi-ratelimit-headers) beside Laravel's, saying the same.
    const standard = {
      'RateLimit-Policy': `"default";q=${this.options.max};w=${this.options.windowSeconds}`,
      RateLimit: `"default";r=${remaining};t=${this.secondsToReset(reset, 0)}`,
    };
    ctx.set(standard);
    if (limited) {
      throw new HttpError(429, Messages.TOO_MANY_ATTEMPTS, {
        'Retry-After': String(this.secondsToReset(reset, 1)),
        'X-RateLimit-Remaining': '0',
        ...standard,
        RateLimit: `"default";r=0;t=${this.secondsToReset(reset, 1)}`,
      });
    }
  }

  /**
   * Whole seconds until the window ends, rounded up, within `atLeast`..window:
   * a client that waits exactly this long must not be refused again (for
   * Retry-After, at least 1). koa-ratelimit's own value is truncated towards
   * zero, so it is computed here from the window's end (Unix seconds).
   */
  private secondsToReset(resetSeconds: number, atLeast: number): number {
    const window = this.options.windowSeconds;
    if (!Number.isFinite(resetSeconds) || resetSeconds <= 0) return window;
    // The Redis driver rounds the window's end down to a whole second; the real end is up to a second later.
    const resetMs = (this.options.redis ? resetSeconds + 1 : resetSeconds) * 1000;
    return Math.min(window, Math.max(atLeast, Math.ceil((resetMs - Date.now()) / 1000)));
  }

  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = Date.now() / 1000;
    for (const [key, entry] of this.memory) if (entry.reset < now) this.memory.delete(key);
  }
}
