import type { Middleware } from 'koa';
import { HttpError } from '../../http/http-error.js';

export interface LoginThrottleOptions {
  /** Failed logins one address may make in a window; the next request is 429 until the window ends. */
  maxFailures: number;
  windowMs: number;
  now?: () => number;
}

/** Addresses remembered at most; past it, windows that ended are forgotten first, then the oldest. */
const MAX_TRACKED = 10_000;

/**
 * Throttles password guessing per client address: a fixed window starts at an
 * address's first failed login (a 401 from the handler inside), and once it
 * holds `maxFailures` failures every request from that address is 429 with
 * `Retry-After` until the window ends, the right password included, so
 * guessing gains nothing from a hit inside it. Kept in this process's memory:
 * the dashboard is one listener of one process.
 */
export function loginThrottle(options: LoginThrottleOptions): Middleware {
  const now = options.now ?? Date.now;
  const failures = new Map<string, { count: number; endsAt: number }>();
  return async (ctx, next) => {
    const address = ctx.ip;
    const entry = failures.get(address);
    const at = now();
    if (entry && entry.endsAt <= at) failures.delete(address);
    else if (entry && entry.count >= options.maxFailures) {
      throw new HttpError(429, undefined, { 'Retry-After': String(Math.max(1, Math.ceil((entry.endsAt - at) / 1000))) });
    }
    try {
      await next();
    } catch (error) {
      if (error instanceof HttpError && error.status === 401) count(failures, address, at, options.windowMs);
      throw error;
    }
  };
}

function count(failures: Map<string, { count: number; endsAt: number }>, address: string, at: number, windowMs: number): void {
  const entry = failures.get(address);
  if (entry) {
    entry.count += 1;
    return;
  }
  if (failures.size >= MAX_TRACKED) {
    for (const [key, value] of failures) if (value.endsAt <= at) failures.delete(key);
    if (failures.size >= MAX_TRACKED) failures.delete(failures.keys().next().value!);
  }
  failures.set(address, { count: 1, endsAt: at + windowMs });
}
