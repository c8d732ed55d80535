import type { Logger } from 'pino';

export interface PeriodicTask {
  stop(): Promise<void>;
}

/**
 * Runs `task` now and then every `intervalMs`, one run at a time, never
 * keeping the process alive; a failed run is logged and the next one tries
 * again. stop() waits for a run under way.
 */
export function startPeriodic(name: string, task: () => Promise<unknown>, intervalMs: number, logger: Logger): PeriodicTask {
  let running: Promise<void> | null = null;
  const run = () => {
    if (running) return;
    running = task()
      .then((result) => logger.debug({ task: name, result }, 'periodic task done'))
      .catch((error: unknown) => logger.warn({ err: error, task: name }, 'periodic task failed; will try again'))
      .finally(() => {
        running = null;
      });
  };
  const first = setTimeout(run, 0);
  first.unref();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
