import type { Logger } from 'pino';
import type { RunExportUseCase } from '@logi/domain';
import type { PeriodicTask } from './periodic-task.js';

/** How often a runner sweeps its staging directory (besides once when it starts). */
const STAGING_SWEEP_INTERVAL_MS = 5 * 60_000;

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
  let lastSweep = 0;

  // A runner killed mid-export leaves its staged archive: swept at the start and every few minutes after.
  const sweep = async () => {
    if (Date.now() - lastSweep < STAGING_SWEEP_INTERVAL_MS) return;
    lastSweep = Date.now();
    const removed = await run.sweepStaging().catch((error: unknown) => {
      logger.warn({ err: error }, 'staged export archives could not be swept');
      return 0;
    });
    if (removed > 0) logger.info({ removed }, 'removed staged export archives of attempts no longer running');
  };

  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(tick, ms);
    timer.unref();
  };
  const tick = () => {
    sweep()
      .then(() => run.execute())
      .then(
        (ran) => schedule(ran ? 0 : intervalMs),
        (error: unknown) => {
          // An attempt's failure is logged with its export id already (the use case's report); this is the pause.
          if (!stopped) logger.warn({ err: error }, 'the export runner pauses after an error');
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
