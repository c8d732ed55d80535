import type { Logger } from 'pino';
import type { RunExportUseCase } from '@logi/domain';
import type { PeriodicTask } from './periodic-task.js';

/**
 * Makes exports in this process, one at a time: looks for a waiting export every `intervalMs` while idle, back to
 * back while some wait. Workers run one in the production profile, the API process in the embedded one. Stopping
 * does not wait for a running export: its lease runs out and another runner (or this one after a restart) makes it
 * again from the start, with the PDFs already in the PDF cache (docs/contribute/decisions/0041-exports.md).
 */
export function startExportRunning(options: { run: RunExportUseCase; intervalMs: number; logger: Logger }): PeriodicTask {
  const { run, intervalMs, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;

  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(tick, ms);
    timer.unref();
  };
  const tick = () => {
    run.execute().then(
      (ran) => schedule(ran ? 0 : intervalMs),
      (error: unknown) => {
        if (!stopped) logger.warn({ err: error }, 'an export attempt failed; it is tried again');
        schedule(Math.max(intervalMs, 1_000));
      },
    );
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
