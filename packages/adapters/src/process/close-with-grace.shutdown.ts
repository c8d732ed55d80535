import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';
import { withTimeout } from '@logi/domain';

/** A log destination that cannot take the last lines within this is not waited for. */
const FLUSH_MS = 1_000;

export interface ShutdownOptions {
  logger: Logger;
  /** Everything the process must close, in order; its rejection means exit code 1. */
  stop: () => Promise<void>;
  /** Past this, counted from the first signal or error, the process exits 1 whatever is still closing. */
  limitMs: number;
}

/**
 * The one exit path of the API and the worker (a composition root installs it). SIGTERM or SIGINT:
 * stop, exit 0 (1 if stopping failed). An uncaught exception or unhandled rejection: the process
 * can no longer be trusted, so it is logged, stopped the same way and exits 1. A second signal or
 * error, or `limitMs` passing, exits 1 at once: the operator or the orchestrator has stopped waiting.
 * Other signals keep Node's defaults (close-with-grace would also catch SIGHUP, SIGUSR2, SIGSEGV...).
 */
export function exitGracefully({ logger, stop, limitMs }: ShutdownOptions): void {
  closeWithGrace(
    {
      delay: limitMs,
      logger: false,
      skip: ['SIGHUP', 'SIGQUIT', 'SIGILL', 'SIGTRAP', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGSEGV', 'SIGUSR2', 'beforeExit'],
      onTimeout: (delay) => logger.error({ limitMs: delay }, 'shutdown took too long; exiting'),
      onSecondSignal: (signal) => logger.warn({ signal }, 'second signal while stopping; exiting now'),
      onSecondError: (error) => logger.fatal({ err: error }, 'second error while stopping; exiting now'),
    },
    async ({ signal, err }) => {
      if (err) logger.fatal({ err }, 'unhandled error; stopping');
      else logger.info({ signal }, 'shutting down');
      try {
        await stop();
      } catch (error) {
        logger.error({ err: error }, 'shutdown failed');
        throw error;
      } finally {
        // pino writes asynchronously: the last lines (why it stopped) must be out before close-with-grace exits.
        await withTimeout(new Promise<void>((resolve) => logger.flush(() => resolve())), FLUSH_MS, { onTimeout: () => undefined });
      }
    },
  );
}
