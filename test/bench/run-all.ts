/**
 * `pnpm bench`: the scale benchmark of issue 8, then docs/benchmarks.md.
 *
 * 1. Seeds (or reuses) one MariaDB database per size in BENCH_SIZES and a
 *    SQLite one (BENCH_SQLITE), through the project's migrations and
 *    `pnpm cli search:reindex`.
 * 2. Starts the real API on each and times every query (part `queries`).
 * 3. Compares list and by-nr throughput with a floor server (`throughput`),
 *    PDFs with the bare renderer (`pdf`), uploads with a direct putObject
 *    (`upload`), and runs the two in-process comparisons (`inprocess`); the
 *    events of issue 18 (`events`): the feed at 10k and 1M events and against
 *    its floor, the write cost of capture, webhook delivery and latencies;
 *    list throughput with OpenTelemetry tracing on against off (`tracing`, issue 19);
 *    start-up time and memory of the built API and worker against tsx (`startup`, issue 19);
 *    an ordinary tenant's PDFs and webhooks alone and beside an abusive tenant (`fairness`, issue 25);
 *    an export against the bare renderer, another client's PDFs beside it, the worker's RSS (`exports`, issue 27).
 * 4. Writes docs/benchmarks.md, docs/bench-latency.svg and docs/bench-results.json,
 *    and prints the report on stdout (progress goes to stderr).
 *
 * Parts that did not run keep their previous results (each section says
 * when it was measured). Every child process is killed on the way out.
 */
import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex } from '@logi/adapters';
import { ApiProcess } from './api-process.js';
import { benchInvoiceList } from './invoice-list.bench.js';
import { benchPdfRender } from './pdf-render.bench.js';
import { loadBenchConfig, parseSize, ROOT, type BenchConfig, type Part } from './config.js';
import { startIoStacks, startS3, type IoStack } from './io-stack.js';
import { benchEvents } from './events.js';
import { benchTracing } from './tracing.js';
import { benchStartup } from './startup.js';
import { benchFairness } from './fairness.js';
import { benchExports } from './exports.js';
import { benchPdf } from './pdf.js';
import { cleanupAll, onCleanup } from './processes.js';
import { log } from './progress.js';
import { QUERIES, queryContext, runQueries, type QueryTarget } from './queries.js';
import { loadResults, machineInfo, writeReport, type BenchResults } from './report.js';
import { prepareMariadb, prepareSqlite, type BenchDatabase } from './seed.js';
import { SMALL_N } from './seed-data.js';
import { compareThroughput } from './throughput.js';
import { benchUpload } from './upload.js';

const REPRODUCE = [
  'Needs MariaDB on 127.0.0.1:3306 (root, no password; its SEQUENCE engine), Redis on 6379 (for the queue stack; skipped when absent), ' +
    '`/usr/bin/chromium` (or `CHROMIUM_PATH`) and `pnpm install`; `./scripts/test.sh` installs and starts all of them.',
  '',
  '```sh',
  'pnpm bench                                        # everything: 10k, 100k and 1M on MariaDB, 100k on SQLite (tens of minutes the first time)',
  'BENCH_SIZES=10k,100k pnpm bench                   # skip 1M',
  'BENCH_PARTS=queries pnpm bench                    # one or more of seed,queries,throughput,pdf,upload,inprocess,events,tracing,startup,fairness,exports',
  'pnpm bench:queries | pnpm bench:throughput | pnpm bench:pdf | pnpm bench:upload | pnpm bench:inprocess | pnpm bench:events | pnpm bench:startup | pnpm bench:fairness | pnpm bench:exports',
  '```',
  '',
  '| Variable | Default | Meaning |',
  '|---|---|---|',
  '| `BENCH_SIZES` | `10k,100k,1m` | MariaDB databases `logi_bench_<size>` (invoices in the big directory) |',
  '| `BENCH_SQLITE` | `100k` | the embedded-profile database under `.tmp/bench/sqlite-<size>`; `0` skips it |',
  '| `BENCH_PARTS` | `queries,throughput,pdf,upload,inprocess,events,tracing,startup,fairness,exports` | what to run; `seed` alone only prepares the databases |',
  '| `BENCH_ROUNDS` | `15` | timed requests per query and database (and rounds of the in-process comparisons) |',
  '| `BENCH_WARMUP` | `3` | untimed requests before them |',
  '| `BENCH_QUERY_BUDGET_SECONDS` | `90` | a query stops sampling a database after this much time (at least 3 samples) |',
  '| `BENCH_RESEED` | unset | `1` drops and seeds the databases again (otherwise a database whose `bench_seed` marker matches is reused) |',
  '| `BENCH_THROUGHPUT_REQUESTS`, `BENCH_CONNECTIONS` | `400`, `10` | the throughput runs |',
  '| `BENCH_PDF_CONCURRENCY` | `1,4,16` | PDF concurrency levels (4 × concurrency requests each, at least 12) |',
  '| `BENCH_UPLOAD_ROUNDS` | `11` | timed uploads per case (their p50; with 5 the ratio moved by ±0.15 from run to run on this machine) |',
  '| `BENCH_QUEUE_STACK` | `1` | `0` skips the Redis + worker stack of the PDF and upload parts |',
  '| `BENCH_EVENTS_FEED` | `10k,1m` | events in the big directory of the feed databases `logi_bench_events_<size>` (reused by their `bench_events_seed` marker) |',
  '| `BENCH_EVENTS_WRITE` | `100k` | invoices of the write-cost load (two fresh databases, dropped after) |',
  '| `BENCH_EVENTS_FEED_ROUNDS`, `BENCH_EVENTS_FEED_REQUESTS` | `400`, `1000` | timed feed pages per size; pages per throughput round |',
  '| `BENCH_EVENTS_LATENCY_SAMPLES`, `BENCH_EVENTS_DELIVERY_ROUNDS` | `40`, `2` | writes timed one at a time (commit to receipt, long poll); delivery rounds |',
  '| `BENCH_EVENTS_ONLY` | unset | `delivery`: the events part runs webhook delivery only and keeps the feed and write figures of the last run |',
  '| `BENCH_TRACING_REQUESTS`, `BENCH_TRACING_ROUNDS` | `2000`, `6` | the tracing part: requests per round, rounds (tracing off and on alternated; on the smallest of `BENCH_SIZES`) |',
  '| `BENCH_STARTUP_ROUNDS` | `7` | the startup part: timed starts of each process in each way (after one untimed start of each) |',
  "| `BENCH_FAIRNESS_PDFS`, `BENCH_FAIRNESS_WRITES` | `30`, `20` | the fairness part: the ordinary tenant's PDFs (one at a time) and writes (each timed to its webhook) per phase |",
  "| `BENCH_FAIRNESS_BURST`, `BENCH_FAIRNESS_POLLS` | `48`, `8` | the fairness part: the abusive tenant's PDF requests kept in flight, its long polls held |",
  "| `BENCH_EXPORTS_INVOICES`, `BENCH_EXPORTS_RSS_INVOICES`, `BENCH_EXPORTS_PDFS` | `2000`, `5000`, `20` | the exports part: invoices (about) of the timed export with PDFs, of the export the worker's RSS is watched over, the other client's PDFs per phase |",
  '| `BENCH_MARIADB_URL`, `BENCH_REDIS_URL` | `mysql://root@127.0.0.1:3306`, `redis://127.0.0.1:6379` | servers |',
  '| `BENCH_STRICT` | unset | `1`: exit 1 when a target is missed |',
  '',
  'Everything runs on 127.0.0.1. Seeding 1M invoices takes several minutes plus the reindex; later runs reuse the databases. ' +
    'The API children get `LOG_LEVEL=warn`, `METRICS_PORT=0`, `RATE_LIMIT_MAX=1000000000` and no `REDIS_URL` (jobs in-process) unless the stack says otherwise; the PDF and upload stacks give the process that runs their jobs a metrics port, read for the stage tables.',
].join('\n');

async function databaseVersions(
  config: BenchConfig,
  sqlite: BenchDatabase | null,
): Promise<{ mariadb: string | null; pool: number | null; sqlite: string | null }> {
  let mariadb: string | null = null;
  let pool: number | null = null;
  let sqliteVersion: string | null = null;
  const admin = createKnex({ databaseUrl: `${config.mariadbUrl}/mysql`, dataDir: path.join(ROOT, '.tmp', 'bench') });
  try {
    const [rows] = (await admin.raw('SELECT VERSION() AS v, @@innodb_buffer_pool_size AS pool')) as unknown as [Array<{ v: string; pool: unknown }>];
    mariadb = rows[0]?.v ?? null;
    pool = rows[0] ? Number(rows[0].pool) : null;
  } catch {
    // MariaDB not reachable: the parts that need it fail on their own
  } finally {
    await admin.destroy();
  }
  if (sqlite) {
    const knex = createKnex({ databaseUrl: null, dataDir: sqlite.dataDir });
    try {
      const rows = await knex.raw<Array<{ v: string }>>('SELECT sqlite_version() AS v');
      sqliteVersion = rows[0]?.v ?? null;
    } finally {
      await knex.destroy();
    }
  }
  return { mariadb, pool, sqlite: sqliteVersion };
}

async function main(): Promise<number> {
  const config = loadBenchConfig();
  const results: BenchResults = await loadResults(ROOT);
  const want = (part: Part) => config.parts.includes(part);
  const needsScaleDatabases = want('seed') || want('queries') || want('throughput');
  log(
    `pnpm bench: parts ${config.parts.join(', ')}; ` +
      (needsScaleDatabases ? `MariaDB ${config.sizes.map((s) => s.label).join(', ')}${config.sqlite ? `, SQLite ${config.sqlite.label}` : ''}; ` : '') +
      `${config.rounds} rounds`,
  );
  results.lastRun = {
    at: new Date().toISOString(),
    env: Object.fromEntries(Object.entries(process.env).filter(([key]) => key.startsWith('BENCH_')) as Array<[string, string]>),
  };

  let completed = 0;
  let failure: unknown = null;
  const databases: BenchDatabase[] = [];
  const apis = new Map<BenchDatabase, ApiProcess>();
  const knexes = new Map<BenchDatabase, Knex>();
  let stacks: IoStack[] = [];
  let s3: Awaited<ReturnType<typeof startS3>> | null = null;
  const stopAll = async () => {
    await Promise.all([...apis.values()].map((api) => api.stop()));
    apis.clear();
    await Promise.all(stacks.map((stack) => stack.stop()));
    stacks = [];
    await Promise.all([...knexes.values()].map((knex) => knex.destroy()));
    knexes.clear();
    if (s3) await s3.stop();
    s3 = null;
  };
  const unregister = onCleanup(stopAll);

  try {
    // 1. Data.
    if (needsScaleDatabases) {
      for (const size of config.sizes) databases.push(await prepareMariadb(config, size));
      if (config.sqlite) databases.push(await prepareSqlite(config, config.sqlite));
      for (const db of databases) {
        results.seeds[db.label] = { database: db.label, engine: db.engine, invoices: db.size.n, smallInvoices: SMALL_N, info: db.info };
      }
      if (want('seed')) completed += 1;
    }
    const versions = await databaseVersions(config, databases.find((db) => db.engine === 'sqlite') ?? null);
    results.machine = await machineInfo(versions.mariadb, versions.pool, versions.sqlite ?? results.machine?.sqlite ?? null, config.chromiumPath);

    // 2. Queries.
    if (want('queries') || want('throughput')) {
      for (const db of databases) {
        log(`${db.label}: starting the API`);
        apis.set(db, await ApiProcess.start(`API on ${db.label}`, db.env, { key: db.apiKey, directory: db.directory }));
        knexes.set(db, createKnex({ databaseUrl: db.databaseUrl, dataDir: db.dataDir }));
      }
    }
    if (want('queries')) {
      const targets: QueryTarget[] = [];
      for (const db of databases) {
        const api = apis.get(db)!;
        targets.push({ label: db.label, api, ctx: await queryContext(knexes.get(db)!, api, db.directory) });
      }
      const only = process.env.BENCH_QUERIES?.split(',')
        .map((q) => q.trim())
        .filter(Boolean);
      const measured = await runQueries(targets, { rounds: config.rounds, warmup: config.warmup, budgetSeconds: config.queryBudgetSeconds, only });
      results.queries = {
        at: new Date().toISOString(),
        rounds: config.rounds,
        warmup: config.warmup,
        budgetSeconds: config.queryBudgetSeconds,
        databases: databases.map((db) => ({ label: db.label, engine: db.engine, n: db.size.n })),
        labels: Object.fromEntries(QUERIES.map((q) => [q.id, q.label])),
        results: measured,
      };
      completed += 1;
    }

    // 3a. Throughput against the floor.
    if (want('throughput')) {
      const rows = [];
      for (const db of databases) {
        const api = apis.get(db)!;
        const exactNr = ((await knexes.get(db)!('orders').select('nr').where({ directory: db.directory }).orderBy('id').offset(4320).first()) as { nr: string })
          .nr;
        const options = { requests: config.throughputRequests, connections: config.connections };
        rows.push(await compareThroughput(db, api, { name: 'GET /v1/invoices?per_page=250', path: '/v1/invoices?per_page=250' }, options));
        rows.push(
          await compareThroughput(db, api, { name: 'GET /v1/orders/by-nr (exact nr)', path: `/v1/orders/by-nr?nr=${encodeURIComponent(exactNr)}` }, options),
        );
      }
      results.throughput = { at: new Date().toISOString(), rows };
      completed += 1;
    }
    await Promise.all([...apis.values()].map((api) => api.stop()));
    apis.clear();

    // 3b. PDFs and uploads on the production-like stacks.
    if (want('pdf') || want('upload')) {
      const io = await prepareMariadb(config, parseSize('2k'), 'logi_bench_io', { fresh: true });
      const ioKnex = createKnex({ databaseUrl: io.databaseUrl, dataDir: io.dataDir });
      knexes.set(io, ioKnex);
      s3 = await startS3();
      stacks = await startIoStacks(config, io, s3.env);
      if (want('pdf')) {
        const invoiceIds = (
          (await ioKnex('invoices').select('id').where({ directory: io.directory, type: 's' }).orderBy('id').limit(64)) as Array<{ id: number }>
        ).map((r) => Number(r.id));
        const rows = await benchPdf(ioKnex, io.directory, stacks, {
          concurrency: config.pdfConcurrency,
          chromiumPath: config.chromiumPath,
          invoiceIds,
          s3: s3.client,
        });
        results.pdf = { at: new Date().toISOString(), rows, invoices: invoiceIds.length };
        completed += 1;
      }
      if (want('upload')) {
        const orderIds = ((await ioKnex('orders').select('id').where({ directory: io.directory }).orderBy('id').limit(200)) as Array<{ id: number }>).map((r) =>
          Number(r.id),
        );
        const rows = await benchUpload(stacks, s3.client, { rounds: config.uploadRounds, orderIds });
        results.upload = { at: new Date().toISOString(), rows };
        completed += 1;
      }
      await stopAll();
    }

    // 3c. Events: databases of their own, API children started and stopped inside.
    if (want('events')) {
      results.events = await benchEvents(config, results.events);
      completed += 1;
    }

    // 3c'. Tracing: two API children (OpenTelemetry off and on), started and stopped inside.
    if (want('tracing')) {
      results.tracing = await benchTracing(config);
      completed += 1;
    }

    // 3c''. Start-up: API and worker children, built and through tsx, started and stopped inside.
    if (want('startup')) {
      results.startup = await benchStartup(config);
      completed += 1;
    }

    // 3c'''. Fair sharing: an ordinary tenant alone and beside an abusive one, on a stack of its own started and stopped inside.
    if (want('fairness')) {
      results.fairness = await benchFairness(config);
      completed += 1;
    }

    // 3c''''. Exports: a stack of its own, started and stopped inside.
    if (want('exports')) {
      results.exports = await benchExports(config);
      completed += 1;
    }

    // 3d. The in-process comparisons.
    if (want('inprocess')) {
      log('in-process comparisons: PDF renderer warm vs cold, invoice list indexed vs unindexed (SQLite)');
      const pdfRender = await benchPdfRender(Math.min(config.rounds, 10));
      const invoiceList = await benchInvoiceList(20_000, config.rounds);
      results.inprocess = { at: new Date().toISOString(), pdfRender, invoiceList };
      completed += 1;
    }
  } catch (error) {
    failure = error;
  } finally {
    await stopAll().catch((error: unknown) => log(`stopping failed: ${String(error)}`));
    unregister();
  }

  let missed = 0;
  if (completed > 0) {
    const report = await writeReport(ROOT, results, REPRODUCE);
    missed = report.missed;
    process.stdout.write(`${report.markdown}\n`);
    log(`wrote docs/benchmarks.md, docs/bench-latency.svg and docs/bench-results.json (${completed} part(s) this run)`);
  }
  if (failure) {
    log(`\nbench FAILED: ${failure instanceof Error ? (failure.stack ?? failure.message) : String(failure)}`);
    return 1;
  }
  if (missed > 0) log(`${missed} target(s) missed`);
  return config.strict && missed > 0 ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  log(`bench FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await cleanupAll();
}
process.exit(code);
