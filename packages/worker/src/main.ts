import type { AppConfig, RedisEndpoint } from '@logi/config';
import { startTelemetry } from '@logi/adapters/telemetry';

// Tracing first, when OTEL_* variables ask for it: its instrumentations patch the modules imported below as they load.
const telemetry = await startTelemetry({ defaultServiceName: 'logistics-worker' });
await import('reflect-metadata');
const { ConfigError, listenConfigError, loadConfig, requireSecretKeys } = await import('@logi/config');
const { createLogger, exitGracefully } = await import('@logi/adapters');

function readConfig(): AppConfig & { redis: RedisEndpoint } {
  try {
    const config = loadConfig();
    if (!config.redis) {
      throw new ConfigError(
        'REDIS_URL',
        'must be set for the worker, or REDIS_SENTINELS with REDIS_SENTINEL_NAME (without Redis the API runs jobs in its own process)',
      );
    }
    // The production profile never stores webhook secrets in clear: no key, no start.
    requireSecretKeys(config);
    return { ...config, redis: config.redis };
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

const config = readConfig();
/** Longer than the worker's own 20 s grace for running jobs, plus closing the browser and the database. */
const SHUTDOWN_LIMIT_MS = 30_000;
const logger = createLogger({ level: config.logLevel, base: { service: 'worker', pid: process.pid } });

// Installed before the worker starts, so an unhandled error during start-up is logged and exits 1 too.
let running: { stop(): Promise<void> } | undefined;
exitGracefully({
  logger,
  limitMs: SHUTDOWN_LIMIT_MS,
  stop: async () => {
    await running?.stop();
    await telemetry?.shutdown();
  },
});

// Loaded after the configuration is known good, so a bad variable is reported without loading the stack.
const { startWorker } = await import('./start-worker.js');
running = await startWorker(config, logger).catch((error: unknown) => {
  logger.fatal({ err: error }, 'worker could not start');
  // One plain line too, as for a bad variable: a METRICS_HOST or METRICS_PORT that cannot be listened on is a set-up mistake an operator must see.
  const problem = error instanceof ConfigError ? error : listenConfigError(error, config, false);
  process.stderr.write(`${problem ? problem.message : `worker could not start: ${error instanceof Error ? error.message : String(error)}`}\n`);
  process.exit(1);
});
