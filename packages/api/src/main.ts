import { startTelemetry } from '@logi/adapters/telemetry';

/** `pnpm start`: the API; without Redis (REDIS_URL or REDIS_SENTINELS) it also runs the jobs in-process. */
async function main(): Promise<void> {
  // Tracing first, when OTEL_* variables ask for it: its instrumentations patch the modules imported below as they load.
  const telemetry = await startTelemetry({ defaultServiceName: 'logistics-api' });
  await import('reflect-metadata');
  const { pino } = await import('pino');
  const { ConfigError, listenConfigError, loadConfig } = await import('@logi/adapters');
  const { buildContainer } = await import('./container.js');
  const { startServer, stopLimitMs } = await import('./server.js');
  const { exitGracefully } = await import('@logi/adapters');

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
  // Installed before the server starts, so an unhandled error during start-up is logged and exits 1 too.
  let running: { stop(): Promise<void> } | undefined;
  exitGracefully({
    logger,
    limitMs: stopLimitMs(config.jobTimeoutMs),
    stop: async () => {
      await running?.stop();
      await telemetry?.shutdown();
    },
  });
  running = await startServer(container).catch((error: unknown) => {
    // A HOST or PORT that cannot be listened on is reported like a wrong value: one line naming it.
    const problem = listenConfigError(error, config);
    if (!problem) throw error;
    console.error(problem.message);
    process.exit(1);
  });
}

main().catch((error: unknown) => {
  console.error('API failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
