import { readFile } from 'node:fs/promises';
import type { Knex } from 'knex';
import {
  API_KEY_SCOPES,
  SweepPdfCacheUseCase,
  type ApiKeyHasherPort,
  type ApiKeyRepositoryPort,
  type ClientRepositoryPort,
  type FeedRestore,
  type FileStoragePort,
  type SecretCipherPort,
  type WebhookSecretStorePort,
} from '@logi/domain';
import { CommandError, progressBar, UsageError, type CliIo } from './cli-io.js';

/** The event feed's restore marks, as `db:after-restore` reads and writes them (restore-commands.ts). */
export interface FeedRestoresAdmin {
  hasFeed(): Promise<boolean>;
  record(options: { highestIssued?: number; nowSeconds: number }): Promise<FeedRestore & { earlier: FeedRestore[] }>;
}

export interface CommandContext {
  io: CliIo;
  /** Opened on first use, so that usage errors never touch the database. */
  knex(): Knex;
  /** Made on first use, like the database. */
  storage(): FileStoragePort;
  hasher: ApiKeyHasherPort;
  /** Made on first use: SECRETS_ENCRYPTION_KEYS, or the embedded profile's key in DATA_DIR. */
  secretCipher(): SecretCipherPort;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: every directory may aim webhooks at private targets. */
  allowPrivateTargetsEverywhere: boolean;
  /** The database work of the commands, from the adapters: run-cli.ts (the CLI's composition root) hands it over. */
  db: CliDatabase;
  /**
   * The `Idempotency-Key` answers kept in Redis (REDIS_URL or REDIS_SENTINELS); null without Redis, where they are
   * in the database. Connected on first use.
   */
  idempotencyAnswers(): { forgetAll(): Promise<number> } | null;
}

/** Schema, fixtures, derived search data and clients, on the database `knex` opens. */
export interface CliDatabase {
  /** Brings the schema up to date; the names of the migrations it ran. */
  migrate(knex: Knex): Promise<string[]>;
  /** Validates a fixture file, then writes it in one transaction; rows per table. */
  loadFixtures(
    knex: Knex,
    json: unknown,
    options: { hasher: ApiKeyHasherPort; onProgress: (progress: { table: string; done: number; total: number }) => void },
  ): Promise<{ clients: number; fileCategories: number; orders: number; invoices: number; invoiceOrders: number; invoiceItems: number }>;
  /** Rebuilds the trigram index, the kept counts and the data versions. */
  rebuildDerivedData(
    knex: Knex,
    options: { onProgress: (progress: { stage: string; done: number; total: number }) => void },
  ): Promise<{ invoices: number; orders: number; postings: number }>;
  clients(knex: Knex): ClientRepositoryPort;
  keys(knex: Knex): ApiKeyRepositoryPort;
  /** Every endpoint's stored webhook secrets. */
  webhookSecrets(knex: Knex): WebhookSecretStorePort;
  /** The directories allowed private webhook targets. */
  webhookTargets(knex: Knex): PrivateTargetDirectories;
  /** The restore marks of the event feed. */
  feedRestores(knex: Knex): FeedRestoresAdmin;
}

export interface PrivateTargetDirectories {
  /** false when it already was allowed. */
  allow(directory: string, now: number): Promise<boolean>;
  /** false when it was not allowed. */
  deny(directory: string): Promise<boolean>;
  list(): Promise<Array<{ directory: string; allowedAt: number }>>;
}

/** Same rule as the fixture format; the API additionally caps header values at 128 characters. */
const DIRECTORY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export async function dbMigrate(ctx: CommandContext): Promise<void> {
  const ran = await ctx.db.migrate(ctx.knex());
  ctx.io.out(ran.length ? `Schema updated: ${ran.join(', ')}` : 'Schema is up to date.');
}

export async function fixturesLoad(ctx: CommandContext, file: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CommandError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CommandError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  await ctx.db.migrate(ctx.knex());
  const counts = await ctx.db.loadFixtures(ctx.knex(), json, {
    hasher: ctx.hasher,
    onProgress: (p) => {
      if (p.total > 0) ctx.io.err(`  ${p.table}: ${p.done}/${p.total}`);
    },
  });
  ctx.io.out(
    `Loaded ${file}: ${counts.clients} clients, ${counts.fileCategories} file categories, ${counts.orders} orders, ` +
      `${counts.invoices} invoices (${counts.invoiceOrders} invoice orders, ${counts.invoiceItems} items).`,
  );
}

/** Rebuilds the trigram index, the kept counts and the data versions from the base tables. */
export async function searchReindex(ctx: CommandContext): Promise<void> {
  await ctx.db.migrate(ctx.knex());
  const bar = progressBar(ctx.io);
  const started = Date.now();
  const result = await ctx.db.rebuildDerivedData(ctx.knex(), { onProgress: (p) => bar.update(p.stage, p.done, p.total) });
  bar.end();
  ctx.io.out(
    `Reindexed ${result.invoices} invoices and ${result.orders} orders (${result.postings} index entries) and rebuilt the counts in ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s.`,
  );
}

/**
 * Empties the PDF cache: the housekeeping's sweep with both bounds at zero,
 * run until a whole walk finds nothing. Safe while APIs run: a removed PDF is
 * rendered again when next asked for.
 */
export async function pdfCacheClear(ctx: CommandContext): Promise<void> {
  const sweep = new SweepPdfCacheUseCase({ storage: ctx.storage(), maxAgeMs: 0, maxObjects: 0 });
  let removed = 0;
  for (;;) {
    const run = await sweep.execute();
    removed += run.expired + run.overCount;
    if (run.walkedToEnd && run.expired + run.overCount === 0) break;
  }
  ctx.io.out(`Removed ${removed} cached PDF${removed === 1 ? '' : 's'}.`);
}

export async function clientsCreate(ctx: CommandContext, options: { directory?: string; name?: string }): Promise<void> {
  const directory = requireDirectory(options.directory);
  const name = options.name?.trim() || directory;
  await ctx.db.migrate(ctx.knex());
  if (await ctx.db.clients(ctx.knex()).findByDirectory(directory)) {
    throw new CommandError(`Client directory "${directory}" already exists; use keys:create to issue another key.`);
  }
  const apiKey = ctx.hasher.generate();
  const key = await ctx.knex().transaction(async (trx) => {
    await ctx.db.clients(trx).upsert({ directory, name, company: { name, address: '', vat: '', bankAccount: '', bankName: '' } });
    return ctx.db.keys(trx).create(allScopesKey(ctx, directory, 'default', apiKey));
  });
  ctx.io.err(`Created client "${directory}" (${name}) with key ${key.id} (every scope). Its API key is shown once; store it now:`);
  ctx.io.out(apiKey);
}

export async function clientsList(ctx: CommandContext): Promise<void> {
  await ctx.db.migrate(ctx.knex());
  const clients = await ctx.db.clients(ctx.knex()).list();
  if (clients.length === 0) {
    ctx.io.err('No clients.');
    return;
  }
  const width = Math.max(...clients.map((c) => c.directory.length), 'DIRECTORY'.length);
  ctx.io.out(`${'DIRECTORY'.padEnd(width)}  NAME`);
  for (const client of clients) ctx.io.out(`${client.directory.padEnd(width)}  ${client.name}`);
}

/**
 * Cuts a directory over to one new key with every scope: all its other keys
 * stop at once. For a rotation without an outage: keys:create, deploy the new
 * key, then keys:revoke the old one (docs/operate/runbook.md).
 */
export async function clientsRotateKey(ctx: CommandContext, options: { directory?: string }): Promise<void> {
  const directory = requireDirectory(options.directory);
  await ctx.db.migrate(ctx.knex());
  if (!(await ctx.db.clients(ctx.knex()).findByDirectory(directory))) throw new CommandError(`Client directory "${directory}" does not exist.`);
  const apiKey = ctx.hasher.generate();
  const key = await ctx.knex().transaction(async (trx) => {
    await ctx.db.keys(trx).revokeAll(directory, unixNow());
    return ctx.db.keys(trx).create(allScopesKey(ctx, directory, 'rotated', apiKey));
  });
  ctx.io.err(`New API key ${key.id} of "${directory}" (every other key of the directory is revoked). It is shown once; store it now:`);
  ctx.io.out(apiKey);
}

function allScopesKey(ctx: CommandContext, directory: string, name: string, apiKey: string) {
  return { directory, name, keyHash: ctx.hasher.hash(apiKey), scopes: [...API_KEY_SCOPES], created: unixNow(), expires: null };
}

const unixNow = () => Math.floor(Date.now() / 1000);

export function requireDirectory(directory: string | undefined): string {
  if (directory === undefined || directory.trim() === '') throw new UsageError('--directory <id> is required.');
  if (!DIRECTORY.test(directory))
    throw new UsageError(`--directory must be 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit (got "${directory}").`);
  return directory;
}
