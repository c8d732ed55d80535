import type { Knex } from 'knex';
import type { ApiProcessTasks } from './process-tasks.js';
import { startTelemetry } from '@logi/adapters/telemetry';
import { redactPath } from './http/redact-path.js';

/** `pnpm start`: the API; without Redis (REDIS_URL or REDIS_SENTINELS) it also runs the jobs in-process. */
async function main(): Promise<void> {
  // Tracing first, when OTEL_* variables ask for it: its instrumentations patch the modules imported below as they load.
  const telemetry = await startTelemetry({ defaultServiceName: 'logistics-api', redactPath });
  await import('reflect-metadata');
  const { ConfigError, listenConfigError, loadConfig, requireSecretKeys } = await import('@logi/config');
  const { createLogger, exitGracefully, migrateLatest, pendingMigrations } = await import('@logi/adapters');
  const { buildContainer } = await import('./container.js');
  const { Tokens } = await import('./tokens.js');
  const { startServer, stopLimitMs } = await import('./server.js');

  let config;
  try {
    config = loadConfig();
    // The production profile never stores webhook secrets in clear: no key, no start.
    requireSecretKeys(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel, base: { service: 'api' } });
  // Installed before anything is built, so an unhandled error during start-up is logged and exits 1 too.
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
  const knex = container.get<Knex>(Tokens.Knex);
  if (config.databaseUrl === null) {
    // Embedded: the database is this process's own file, so a fresh DATA_DIR gets its schema here.
    const ran = await migrateLatest(knex);
    if (ran.length > 0) logger.info({ migrations: ran }, 'database schema created or updated');
  } else {
    // Shared MariaDB: migrating is the operator's step (before the new release starts); say when it was missed.
    await pendingMigrations(knex).then(
      (pending) => {
        if (pending.length > 0)
          logger.warn({ pending }, `the database schema is ${pending.length} migration(s) behind this release: run \`pnpm cli db:migrate\``);
      },
      (error: unknown) => logger.warn({ err: error }, 'could not read the schema version at start; /health/ready reports the database'),
    );
  }
  try {
    await container.get<ApiProcessTasks>(Tokens.ProcessTasks).checkSecretKeys();
  } catch (error) {
    // Webhook secrets encrypted with a key this process lacks: one line naming SECRETS_ENCRYPTION_KEYS, as for a wrong value.
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
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
