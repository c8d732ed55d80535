import { setTimeout as sleep } from 'node:timers/promises';
import { retryAfterSeconds } from './api.errors.js';

export interface RetryOptions {
  /** Tries in all, the first included (default 3). */
  attempts?: number;
  /** A longer `Retry-After` is not waited for: the answer is given to the caller (default 60). */
  maxWaitSeconds?: number;
  /** Told before each wait, e.g. to log it. */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  status: number;
  /** The attempt that was answered 429 or 503 (1 for the first). */
  attempt: number;
  waitSeconds: number;
  url: string;
}

const RETRIED_STATUSES = new Set([429, 503]);

/**
 * A fetch that sends a request again after a 429 or 503, waiting what the
 * answer's `Retry-After` says (1 s when it says nothing), at most `attempts`
 * times and never longer than `maxWaitSeconds`. Both answers mean nothing was
 * done (the contract), so any request, an upload included, is safe to resend;
 * the body is kept (a clone) until the last try.
 */
export function retryingFetch(base: typeof fetch, options: RetryOptions): typeof fetch {
  const attempts = Math.max(1, options.attempts ?? 3);
  const maxWaitSeconds = options.maxWaitSeconds ?? 60;
  return async (input, init) => {
    const request = new Request(input, init);
    for (let attempt = 1; ; attempt += 1) {
      const last = attempt >= attempts;
      const response = await base(last ? request : request.clone());
      if (last || !RETRIED_STATUSES.has(response.status)) return response;
      const waitSeconds = retryAfterSeconds(response.headers.get('retry-after')) ?? 1;
      if (waitSeconds > maxWaitSeconds) return response;
      await response.body?.cancel();
      options.onRetry?.({ status: response.status, attempt, waitSeconds, url: request.url });
      await sleep(waitSeconds * 1000, undefined, { signal: request.signal });
    }
  };
}
