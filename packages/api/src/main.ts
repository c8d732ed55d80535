import { startTelemetry } from '@logi/adapters/telemetry';

/** `pnpm start`: the API; without Redis (REDIS_URL or REDIS_SENTINELS) it also runs the jobs in-process. */
async function main(): Promise<void> {
  // Tracing first, when OTEL_* variables ask for it: its instrumentations patch the modules imported below as they load.
  const telemetry = await startTelemetry({ defaultServiceName: 'logistics-api' });
  await import('reflect-metadata');
  const { pino } = await import('pino');
  const { ConfigError, listenConfigError, loadConfig } = await import('@logi/config');
  const { buildContainer } = await import('./container.js');
  const { startServer } = await import('./server.js');

  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel, base: { service: 'api' } });
  const container = buildContainer(config, logger);
  const server = await startServer(container).catch((error: unknown) => {
    // A HOST or PORT that cannot be listened on is reported like a wrong value: one line naming it.
    const problem = listenConfigError(error, config);
    if (!problem) throw error;
    console.error(problem.message);
    process.exit(1);
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    server
      .stop()
      .then(() => telemetry?.shutdown())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error('API failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
