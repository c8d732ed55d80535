import path from 'node:path';
import type { Knex } from 'knex';
import { KnexEventCapture } from '@logi/adapters';
import { PublishEventsUseCase } from '@logi/domain';
import { ROOT, WORK_DIR, type BenchConfig } from './config.js';
import { OutputTail, spawnTracked } from './processes.js';
import { log } from './progress.js';
import type { BenchDatabase } from './seed.js';

/**
 * What a seeded database needs after its rows are in: fresh planner
 * statistics, the derived data rebuilt as an operator would (`pnpm cli
 * search:reindex`), and the changes the load's triggers captured published as
 * events, so that no API child spends the benchmark on them.
 */

export type ReindexStatus = 'ok' | 'unavailable' | 'skipped';

/**
 * Migrations that leave the search index and the other derived data valid:
 * they only add or change plain indexes, or build a derived table of their own
 * from the base tables (012). A reused database that runs them needs no
 * reindex (14 to 37 minutes at 1M); any other migration rebuilds the derived
 * data.
 */
export const KEEP_DERIVED_DATA = new Set([
  '010-event-retention-index',
  '011-vat-sort-index',
  '012-customer-name-counts',
  '013-directory-lock-first',
  '014-upload-quota-usage',
  '015-webhook-fair-claims',
  '016-exports',
  '017-api-keys',
  '018-webhook-secrets-at-rest',
  // Nullable columns that no derived data reads.
  '019-national-e-invoice-fields',
  // A nullable column and an index on the exports table.
  '020-export-fair-claims',
  '021-webhook-next-due',
  '022-feed-restores',
  '023-event-capture-time',
]);

/** Fresh statistics for the planner: every table of the schema. */
export async function analyze(knex: Knex): Promise<void> {
  if (String(knex.client.config.client) === 'better-sqlite3') {
    await knex.raw('ANALYZE');
    return;
  }
  const [rows] = (await knex.raw('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = ?', [
    'BASE TABLE',
  ])) as unknown as [Array<{ name: string }>];
  const names = rows.map((row) => `\`${row.name}\``);
  if (names.length) await knex.raw(`ANALYZE TABLE ${names.join(', ')}`);
}

/**
 * `pnpm cli search:reindex` as a child process, on a terminal with its own
 * progress bar. Until the command exists the CLI answers `Unknown command`
 * with exit 2: then the derived data is left as the migration and the
 * triggers made it, with a warning.
 */
export async function reindex(base: Pick<BenchDatabase, 'label' | 'env'>, _config?: BenchConfig): Promise<{ status: ReindexStatus; seconds: number | null }> {
  const started = Date.now();
  const code = await runCli(['search:reindex'], base.env, 'inherit');
  const seconds = (Date.now() - started) / 1000;
  if (code === 0) {
    log(`${base.label}: search:reindex done in ${seconds.toFixed(1)} s`);
    return { status: 'ok', seconds };
  }
  if (code === 2) {
    // Exit 2 is the CLI's usage error; ask again, quietly, to tell "no such command" from other usage errors.
    const tail = new OutputTail();
    await runCli(['search:reindex'], base.env, tail);
    if (/Unknown command/i.test(tail.toString())) {
      log(`WARNING ${base.label}: \`search:reindex\` is not available yet (the CLI answers Unknown command); going on without it`);
      return { status: 'unavailable', seconds: null };
    }
    throw new Error(`${base.label}: search:reindex failed with a usage error:\n${tail.toString()}`);
  }
  throw new Error(`${base.label}: search:reindex exited with ${code}`);
}

function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^(DATABASE_URL|DATA_DIR|REDIS_URL|REDIS_PREFIX|S3_.*)$/.test(key)) delete env[key];
  }
  return { ...env, DATA_DIR: path.join(WORK_DIR, 'cli-data'), LOG_LEVEL: 'warn', ...extra };
}

async function runCli(args: string[], extraEnv: Record<string, string>, output: 'inherit' | OutputTail): Promise<number | null> {
  const child = spawnTracked(process.execPath, ['--import', 'tsx', path.join(ROOT, 'packages/api/src/cli/main.ts'), ...args], {
    cwd: ROOT,
    env: cliEnv(extraEnv),
    // The CLI's stdout goes to stderr too: stdout carries the benchmark's tables only.
    stdio: output === 'inherit' ? ['ignore', 2, 'inherit'] : ['ignore', 'pipe', 'pipe'],
  });
  if (output !== 'inherit') {
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
  }
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
}

/**
 * The load's invoices were captured as changes by the event triggers: they
 * are published here, before anything is measured, so that no API child
 * spends the benchmark publishing a backlog (the time it takes is logged).
 */
export async function publishCapturedChanges(knex: Knex, label: string): Promise<void> {
  const publish = new PublishEventsUseCase({ capture: new KnexEventCapture(knex), batchSize: 1_000, budgetMs: 60_000 });
  const started = Date.now();
  let total = 0;
  for (;;) {
    const run = await publish.execute();
    total += run.events;
    if (!run.budgetSpent) break;
    log(`${label}: ${total.toLocaleString('en-US')} events published so far`);
  }
  if (total > 0) log(`${label}: ${total.toLocaleString('en-US')} events published in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
