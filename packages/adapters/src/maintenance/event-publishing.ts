import type { Logger } from 'pino';
import type { PublishEventsUseCase } from '@logi/domain';
import type { PeriodicTask } from './periodic-task.js';

/**
 * Publishes captured changes as events in this process: every
 * `intervalMs` while idle, back to back while a backlog lasts (a bulk load),
 * yielding to the event loop between batches. Every API and worker process
 * runs one; the capture lets one publisher in at a time. A failed run (the
 * database gone) is logged once per outage and tried again at the next tick.
 */
export function startEventPublishing(options: {
  publish: PublishEventsUseCase;
  intervalMs: number;
  logger: Logger;
  /** Called after a run that stored events (wakes this process's long polls at once). */
  onPublished?: (events: number) => void;
}): PeriodicTask {
  const { publish, intervalMs, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let failing = false;

  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(run, ms);
    timer.unref();
  };
  const run = () => {
    running = publish
      .execute()
      .then((result) => {
        if (failing) logger.info('event publishing works again');
        failing = false;
        if (result.events > 0) options.onPublished?.(result.events);
        // A full run means more is waiting: go on at once, after other work had its turn.
        schedule(result.changes > 0 && result.budgetSpent ? 0 : intervalMs);
      })
      .catch((error: unknown) => {
        if (!failing) logger.warn({ err: error }, 'publishing events failed; will try again');
        failing = true;
        schedule(Math.max(intervalMs, 1_000));
      })
      .finally(() => {
        running = null;
      });
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
