/** What a race against the clock ends with when no `onTimeout` says otherwise. */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';

  constructor(readonly ms: number) {
    super(`did not finish within ${ms} ms`);
  }
}

export interface TimeoutOptions<U> {
  /** The race's outcome after `ms`: its return value resolves it, what it throws rejects it (a TimeoutError by default). */
  onTimeout?: () => U;
  /** Ends the race early with the signal's reason (a lost connection makes waiting for the deadline pointless). */
  signal?: AbortSignal;
  /** The timer alone does not keep the process alive (bounds on background work and on closing). */
  unref?: boolean;
}

/**
 * Settles as `work` does, unless `ms` pass first or `signal` aborts. The timer is cleared when the race
 * ends; the work itself is not stopped (only its owner can), and its late rejection is not reported as unhandled.
 */
export async function withTimeout<T, U = never>(
  work: PromiseLike<T> | (() => PromiseLike<T> | T),
  ms: number,
  options: TimeoutOptions<U> = {},
): Promise<T | U> {
  const running = Promise.resolve().then(typeof work === 'function' ? work : () => work);
  running.catch(() => undefined);
  const { onTimeout, signal, unref } = options;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const late = new Promise<U>((resolve, reject) => {
    timer = setTimeout(
      () => {
        try {
          resolve(onTimeout ? onTimeout() : Promise.reject(new TimeoutError(ms)));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      },
      Math.max(0, ms),
    );
    if (unref) timer.unref();
    if (!signal) return;
    onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([running, late]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
