import { startTelemetry } from '@logi/adapters/telemetry';

/** `pnpm start`: the API; without Redis (REDIS_URL or REDIS_SENTINELS) it also runs the jobs in-process. */
async function main(): Promise<void> {
  // Tracing first, when OTEL_* variables ask for it: its instrumentations patch the modules imported below as they load.
  const telemetry = await startTelemetry({ defaultServiceName: 'logistics-api' });
  await import('reflect-metadata');
  const { pino } = await import('pino');
  const { ConfigError, listenConfigError, loadConfig } = await import('@logi/adapters');
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
  // Installed before anything is built, so an unhandled error during start-up is logged and exits 1 too.
  const { exitGracefully } = await import('@logi/adapters');
  const { stopLimitMs } = await import('./server.js');
  let running: { stop(): Promise<void> } | undefined;
  exitGracefully({
    logger,
    limitMs: stopLimitMs(config.jobTimeoutMs),
    stop: async () => {
      await running?.stop();
      await telemetry?.shutdown();
    },
  });
  const container = buildContainer(config, logger);
  const server = await startServer(container).catch((error: unknown) => {
    // A HOST or PORT that cannot be listened on is reported like a wrong value: one line naming it.
    const problem = listenConfigError(error, config);
    if (!problem) throw error;
    console.error(problem.message);
    process.exit(1);
  });
  running = server;
}

main().catch((error: unknown) => {
  console.error('API failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
