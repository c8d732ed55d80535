import { parseArgs } from 'node:util';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type { FileStoragePort, SecretCipherPort } from '@logi/domain';
import {
  createFileStorage,
  createKnex,
  FixtureValidationError,
  KnexApiKeyRepository,
  KnexClientRepository,
  lineKnexLogger,
  loadFixtures,
  migrateLatest,
  rebuildDerivedData,
  Sha256ApiKeyHasher,
  createSecretCipher,
  newSecretKeyEntry,
  KnexWebhookSecretStore,
  KnexWebhookTargetPolicy,
  KnexFeedRestores,
  createRedis,
  RedisIdempotencyStore,
} from '@logi/adapters';
import { ConfigError, loadConfig } from '@logi/config';
import { clientsCreate, clientsList, clientsRotateKey, dbMigrate, fixturesLoad, pdfCacheClear, searchReindex, type CommandContext } from './cli-commands.js';
import { CommandError, USAGE, UsageError, type CliIo } from './cli-io.js';
import {
  eventsStatus,
  webhooksAllowPrivate,
  webhooksDeliveries,
  webhooksDenyPrivate,
  webhooksEnable,
  webhooksList,
  webhooksPrivateTargets,
  webhooksReencrypt,
} from './webhook-commands.js';
import { keysCreate, keysList, keysRevoke } from './key-commands.js';
import { exportsList } from './export-commands.js';
import { dbAfterRestore } from './restore-commands.js';

type Options = Record<string, { type: 'string' | 'boolean' }>;

interface CommandSpec {
  options: Options;
  positionals: number;
  run(ctx: CommandContext, values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<void>;
}

const COMMANDS: Record<string, CommandSpec> = {
  'db:migrate': { options: {}, positionals: 0, run: (ctx) => dbMigrate(ctx) },
  'db:after-restore': {
    options: { 'highest-issued': { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => dbAfterRestore(ctx, { highestIssued: values['highest-issued'] as string | undefined }),
  },
  'fixtures:load': { options: {}, positionals: 1, run: (ctx, _values, [file]) => fixturesLoad(ctx, file!) },
  'clients:create': {
    options: { directory: { type: 'string' }, name: { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => clientsCreate(ctx, { directory: values.directory as string | undefined, name: values.name as string | undefined }),
  },
  'clients:list': { options: {}, positionals: 0, run: (ctx) => clientsList(ctx) },
  'search:reindex': { options: {}, positionals: 0, run: (ctx) => searchReindex(ctx) },
  'pdf-cache:clear': { options: {}, positionals: 0, run: (ctx) => pdfCacheClear(ctx) },
  'webhooks:list': {
    options: { directory: { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => webhooksList(ctx, { directory: values.directory as string | undefined }),
  },
  'webhooks:deliveries': {
    options: { endpoint: { type: 'string' }, limit: { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => webhooksDeliveries(ctx, { endpoint: values.endpoint as string | undefined, limit: values.limit as string | undefined }),
  },
  'webhooks:enable': {
    options: { endpoint: { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => webhooksEnable(ctx, { endpoint: values.endpoint as string | undefined }),
  },
  'webhooks:allow-private': {
    options: { directory: { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => webhooksAllowPrivate(ctx, { directory: values.directory as string | undefined }),
  },
  'webhooks:deny-private': {
    options: { directory: { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => webhooksDenyPrivate(ctx, { directory: values.directory as string | undefined }),
  },
  'webhooks:private-targets': { options: {}, positionals: 0, run: (ctx) => webhooksPrivateTargets(ctx) },
  'webhooks:reencrypt': { options: {}, positionals: 0, run: (ctx) => webhooksReencrypt(ctx) },
  'events:status': { options: {}, positionals: 0, run: (ctx) => eventsStatus(ctx) },
  'exports:list': {
    options: { directory: { type: 'string' }, limit: { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => exportsList(ctx, { directory: values.directory as string | undefined, limit: values.limit as string | undefined }),
  },
  'clients:rotate-key': {
    options: { directory: { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => clientsRotateKey(ctx, { directory: values.directory as string | undefined }),
  },
  'keys:create': {
    options: { directory: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, 'expires-in-days': { type: 'string' } },
    positionals: 0,
    run: (ctx, values) =>
      keysCreate(ctx, {
        directory: values.directory as string | undefined,
        name: values.name as string | undefined,
        scopes: values.scopes as string | undefined,
        expiresInDays: values['expires-in-days'] as string | undefined,
      }),
  },
  'keys:list': {
    options: { directory: { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => keysList(ctx, { directory: values.directory as string | undefined }),
  },
  'keys:revoke': {
    options: { directory: { type: 'string' }, 'key-id': { type: 'string' } },
    positionals: 0,
    run: (ctx, values) => keysRevoke(ctx, { directory: values.directory as string | undefined, keyId: values['key-id'] as string | undefined }),
  },
};

/**
 * Runs one command and returns the exit code: 0 done, 1 the work failed
 * (bad configuration, bad fixture file, existing client...), 2 a wrong
 * command line.
 */
export async function runCli(argv: string[], io: CliIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.err : io.out)(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === 'secrets:generate-key') {
    // Reads no configuration and opens no database: the key is made before there is anything to configure.
    if (rest.length > 0) return usageError(io, `${name} takes no arguments.`);
    io.out(newSecretKeyEntry());
    return 0;
  }
  const spec = COMMANDS[name];
  if (!spec) return usageError(io, `Unknown command "${name}".`);

  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options: spec.options, allowPositionals: true, strict: true });
  } catch (error) {
    return usageError(io, (error as Error).message);
  }
  if (parsed.positionals.length !== spec.positionals) {
    return usageError(io, spec.positionals === 0 ? `${name} takes no arguments.` : `${name} needs ${spec.positionals} argument.`);
  }

  let knex: Knex | null = null;
  let storage: FileStoragePort | null = null;
  let cipher: SecretCipherPort | null = null;
  let redis: Redis | null = null;
  try {
    const config = loadConfig(env);
    const ctx: CommandContext = {
      io,
      hasher: new Sha256ApiKeyHasher(),
      knex: () =>
        (knex ??= createKnex({
          databaseUrl: config.databaseUrl,
          dataDir: config.dataDir,
          poolMax: config.databasePoolMax,
          logger: lineKnexLogger((line) => io.err(line)),
        })),
      storage: () => (storage ??= createFileStorage(config)),
      secretCipher: () => (cipher ??= createSecretCipher(config)),
      allowPrivateTargetsEverywhere: config.webhooks.allowPrivateTargets,
      idempotencyAnswers: () => {
        if (!config.redis) return null;
        redis ??= createRedis(config.redis, { role: 'client', connectionName: `${config.redisPrefix}:cli` });
        return new RedisIdempotencyStore(redis, config.redisPrefix);
      },
      db: {
        migrate: migrateLatest,
        loadFixtures,
        rebuildDerivedData,
        clients: (db) => new KnexClientRepository(db),
        keys: (db) => new KnexApiKeyRepository(db),
        webhookSecrets: (db) => new KnexWebhookSecretStore(db),
        webhookTargets: (db) => new KnexWebhookTargetPolicy(db),
        feedRestores: (db) => new KnexFeedRestores(db),
      },
    };
    await spec.run(ctx, parsed.values, parsed.positionals);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, error.message);
    if (error instanceof ConfigError || error instanceof CommandError || error instanceof FixtureValidationError) {
      io.err(error.message);
      return 1;
    }
    io.err(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    // An open pool would keep the process alive.
    if (knex) await (knex as Knex).destroy();
    (redis as Redis | null)?.disconnect();
  }
}

function usageError(io: CliIo, message: string): number {
  io.err(message);
  io.err('');
  io.err(USAGE);
  return 2;
}
