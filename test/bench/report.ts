import { execFile } from 'node:child_process';
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { BenchResult } from './bench-kit.js';
import { eventChecks, eventsSection } from './events-report.js';
import type { EventsResults } from './events.js';
import { tracingCheck, tracingSection } from './tracing-report.js';
import type { TracingResults } from './tracing.js';
import { startupCheck, startupSection } from './startup-report.js';
import { fairnessChecks, fairnessSection } from './fairness-report.js';
import type { FairnessResults } from './fairness.js';
import { exportsChecks, exportsSection } from './exports-report.js';
import type { ExportsResults } from './exports.js';
import type { StartupResults } from './startup.js';
import { bytes, count, escapeCell, ms, queueWait, seconds, table, TARGETS, verdict, when } from './report-format.js';
import { pdfSection, type PdfResults } from './pdf-report.js';
import { QUERIES, type QueryMeasurement } from './queries.js';
import type { SeedInfo } from './seed.js';
import type { ThroughputRow } from './throughput.js';
import type { UploadRow } from './upload.js';

export const RESULTS_FILE = 'docs/bench-results.json';
export const CHART_FILE = 'docs/bench-latency.svg';
export const REPORT_FILE = 'docs/benchmarks.md';
/** Everything below this line in docs/benchmarks.md is kept as it is by the next run (analysis, EXPLAIN notes). */
export const KEEP_MARKER = '<!-- pnpm bench writes everything above this line; text below it is kept -->';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  mariadb: string | null;
  innodbBufferPoolMiB: number | null;
  sqlite: string | null;
  chromium: string | null;
  loadAverage: number[];
}

export interface SeedRow {
  database: string;
  engine: 'mariadb' | 'sqlite';
  invoices: number;
  smallInvoices: number;
  info: SeedInfo;
}

export interface BenchResults {
  format: 1;
  machine?: Machine;
  /** Per database label; replaced when a run uses that database. */
  seeds: Record<string, SeedRow>;
  queries?: {
    at: string;
    rounds: number;
    warmup: number;
    budgetSeconds: number;
    /** Database labels in column order (MariaDB by size, then SQLite). */
    databases: Array<{ label: string; engine: 'mariadb' | 'sqlite'; n: number }>;
    labels: Record<string, string>;
    results: Record<string, Record<string, QueryMeasurement>>;
  };
  throughput?: { at: string; rows: ThroughputRow[] };
  pdf?: PdfResults;
  upload?: { at: string; rows: UploadRow[] };
  inprocess?: { at: string; invoiceList: { invoices: number; results: BenchResult[] }; pdfRender: BenchResult };
  events?: EventsResults;
  tracing?: TracingResults;
  startup?: StartupResults;
  fairness?: FairnessResults;
  exports?: ExportsResults;
  /** The last run's command line knobs. */
  lastRun?: { at: string; env: Record<string, string> };
}

export async function loadResults(root: string): Promise<BenchResults> {
  try {
    const parsed = JSON.parse(await readFile(path.join(root, RESULTS_FILE), 'utf8')) as BenchResults;
    if (parsed.format === 1) return { ...parsed, seeds: parsed.seeds ?? {} };
  } catch {
    // first run
  }
  return { format: 1, seeds: {} };
}

const run = promisify(execFile);

export async function machineInfo(
  mariadbVersion: string | null,
  bufferPoolBytes: number | null,
  sqliteVersion: string | null,
  chromiumPath: string,
): Promise<Machine> {
  let chromium: string | null;
  try {
    chromium = (await run(chromiumPath, ['--version'], { timeout: 15_000 })).stdout.trim();
  } catch {
    chromium = null;
  }
  let osName = `${os.type()} ${os.release()}`;
  try {
    const release = await readFile('/etc/os-release', 'utf8');
    const pretty = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(release);
    if (pretty) osName = `${pretty[1]} (kernel ${os.release()})`;
  } catch {
    // not Linux
  }
  return {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: osName,
    node: process.version,
    mariadb: mariadbVersion,
    innodbBufferPoolMiB: bufferPoolBytes === null ? null : Math.round(bufferPoolBytes / 1024 ** 2),
    sqlite: sqliteVersion,
    chromium,
    loadAverage: os.loadavg().map((v) => Math.round(v * 100) / 100),
  };
}

/** MariaDB columns in size order: the smallest and the largest define the scale ratio. */
function scaleColumns(results: NonNullable<BenchResults['queries']>): { small: string | null; large: string | null; targetApplies: boolean } {
  const mariadb = results.databases.filter((d) => d.engine === 'mariadb').sort((a, b) => a.n - b.n);
  if (mariadb.length < 2) return { small: null, large: null, targetApplies: false };
  const small = mariadb[0]!;
  const large = mariadb[mariadb.length - 1]!;
  return { small: small.label, large: large.label, targetApplies: small.n <= 10_000 && large.n >= 1_000_000 };
}

export interface Summary {
  lines: string[];
  missed: number;
}

function summary(results: BenchResults): Summary {
  const lines: string[] = [];
  let missed = 0;
  const q = results.queries;
  if (q) {
    const { small, large, targetApplies } = scaleColumns(q);
    if (small && large) {
      const ratios = Object.entries(q.results).map(([id, perDb]) => ({ id, ratio: (perDb[large]?.p50 ?? NaN) / (perDb[small]?.p50 ?? NaN) }));
      const over = ratios.filter((r) => !(r.ratio <= TARGETS.queryRatio));
      const worst = ratios.reduce((a, b) => (b.ratio > a.ratio ? b : a), ratios[0]!);
      const text = `${ratios.length - over.length} of ${ratios.length} queries within ${TARGETS.queryRatio}× (worst: ${q.labels[worst.id]} at ${worst.ratio.toFixed(1)}×)`;
      if (targetApplies) {
        missed += over.length;
        lines.push(`| p50 at 1M rows ≤ ${TARGETS.queryRatio}× p50 at 10k, every query | ${text} | ${verdict(over.length === 0)} |`);
      } else {
        lines.push(`| p50 at 1M rows ≤ ${TARGETS.queryRatio}× p50 at 10k (measured here: ${large} vs ${small}) | ${text} | not judged: 1M not in this run |`);
      }
    } else {
      lines.push(`| p50 at 1M rows ≤ ${TARGETS.queryRatio}× p50 at 10k, every query | one MariaDB size in this run | not judged |`);
    }
  }
  if (results.throughput?.rows.length) {
    const worst = results.throughput.rows.reduce((a, b) => (b.ratio < a.ratio ? b : a));
    const ok = worst.ratio >= TARGETS.listFloor;
    if (!ok) missed += results.throughput.rows.filter((r) => r.ratio < TARGETS.listFloor).length;
    lines.push(
      `| list and by-nr throughput ≥ ${TARGETS.listFloor} of the floor | lowest ${worst.ratio.toFixed(2)} (${worst.database}, ${worst.endpoint}) | ${verdict(ok)} |`,
    );
  }
  if (results.pdf?.rows.length) {
    const worst = results.pdf.rows.reduce((a, b) => (b.ratio < a.ratio ? b : a));
    const ok = worst.ratio >= TARGETS.pdf;
    if (!ok) missed += results.pdf.rows.filter((r) => r.ratio < TARGETS.pdf).length;
    lines.push(
      `| PDF through API and queue ≥ ${TARGETS.pdf} of the bare warm renderer | lowest ${worst.ratio.toFixed(2)} (${worst.stack}, concurrency ${worst.concurrency}) | ${verdict(ok)} |`,
    );
    const cached = results.pdf.rows.filter((r) => r.cachedRatio !== undefined);
    if (cached.length) {
      const least = cached.reduce((a, b) => (b.cachedRatio! < a.cachedRatio! ? b : a));
      const cachedOk = least.cachedRatio! >= TARGETS.pdfCached;
      if (!cachedOk) missed += cached.filter((r) => r.cachedRatio! < TARGETS.pdfCached).length;
      lines.push(
        `| cached PDF download ≥ ${TARGETS.pdfCached}× the PDFs/s of a render | lowest ${least.cachedRatio!.toFixed(1)}× (${least.stack}, concurrency ${least.concurrency}) | ${verdict(cachedOk)} |`,
      );
    }
  }
  if (results.upload?.rows.length) {
    const worst = results.upload.rows.reduce((a, b) => (b.ratio < a.ratio ? b : a));
    const ok = worst.ratio >= TARGETS.upload;
    if (!ok) missed += results.upload.rows.filter((r) => r.ratio < TARGETS.upload).length;
    lines.push(`| upload ≥ ${TARGETS.upload} of a direct putObject | lowest ${worst.ratio.toFixed(2)} (${worst.stack}, ${worst.case}) | ${verdict(ok)} |`);
  }
  if (results.events) {
    for (const check of eventChecks(results.events)) {
      if (check.met === false) missed += 1;
      lines.push(`| ${check.target} | ${check.measured} | ${check.met === null ? 'reported' : verdict(check.met)} |`);
    }
  }
  const tracing = results.tracing && tracingCheck(results.tracing);
  if (tracing) {
    if (!tracing.met) missed += 1;
    lines.push(`| ${tracing.target} | ${tracing.measured} | ${verdict(tracing.met)} |`);
  }
  const startup = results.startup && startupCheck(results.startup);
  if (startup) {
    if (!startup.met) missed += 1;
    lines.push(`| ${startup.target} | ${startup.measured} | ${verdict(startup.met)} |`);
  }
  if (results.fairness) {
    for (const check of fairnessChecks(results.fairness)) {
      if (check.met === false) missed += 1;
      lines.push(`| ${check.target} | ${check.measured} | ${check.met === null ? 'reported' : verdict(check.met)} |`);
    }
  }
  if (results.exports) {
    for (const check of exportsChecks(results.exports)) {
      if (check.met === false) missed += 1;
      lines.push(`| ${check.target} | ${check.measured} | ${check.met === null ? 'reported' : verdict(check.met)} |`);
    }
  }
  return { lines, missed };
}

// ---------------------------------------------------------------- markdown

export function renderMarkdown(results: BenchResults, reproduce: string): { markdown: string; missed: number } {
  const out: string[] = [];
  const sum = summary(results);
  out.push('# Benchmarks');
  out.push('');
  out.push(
    'Written by `pnpm bench` (test/bench/run-all.ts). Each section names the run it comes from; within a section every figure and its ' +
      'baseline or floor were measured in the same run, interleaved, because these machines are shared and noisy: ratios carry over, absolute times less so.',
  );
  out.push('');
  out.push('## Targets');
  out.push('');
  out.push(
    sum.lines.length
      ? table(
          ['Target (issue 8; events: issue 18; tracing, start-up: issue 19; fair sharing: issue 25)', 'Measured', ''],
          sum.lines.map((line) => line.slice(2, -2).split(' | ')),
        )
      : 'No part has run yet.',
  );
  out.push('');

  if (results.queries) out.push(...queriesSection(results));
  if (results.throughput?.rows.length) out.push(...throughputSection(results.throughput));
  if (results.pdf?.rows.length) out.push(...pdfSection(results.pdf));
  if (results.upload?.rows.length) out.push(...uploadSection(results.upload));
  if (results.inprocess) out.push(...inprocessSection(results.inprocess));
  if (results.events) out.push(...eventsSection(results.events));
  if (results.tracing) out.push(...tracingSection(results.tracing));
  if (results.startup) out.push(...startupSection(results.startup));
  if (results.fairness) out.push(...fairnessSection(results.fairness));
  if (results.exports) out.push(...exportsSection(results.exports));
  if (Object.keys(results.seeds).length) out.push(...seedSection(results));
  if (results.machine) out.push(...machineSection(results.machine));
  out.push('## How to reproduce');
  out.push('');
  out.push(reproduce);
  out.push('');
  return { markdown: out.join('\n'), missed: sum.missed };
}

function queriesSection(results: BenchResults): string[] {
  const q = results.queries!;
  const out: string[] = [];
  const { small, large, targetApplies } = scaleColumns(q);
  const sqlite = q.databases.filter((d) => d.engine === 'sqlite');
  const mariadb = q.databases.filter((d) => d.engine === 'mariadb').sort((a, b) => a.n - b.n);
  out.push('## Query latency against rows');
  out.push('');
  out.push(
    `Run of ${when(q.at)}. The real API (\`node --import tsx packages/api/src/main.ts\`, one process per database, jobs in-process) on loopback, ` +
      `one client directory of N invoices (one order row and one item each) and N orders, beside a second directory of 2,000. ` +
      `Per query and database: ${q.warmup} untimed requests, then ${q.rounds} timed ones, sequential, the databases taking turns request by request. ` +
      `Cells are p50 (p90). \`per_page=250\` unless the query says otherwise. “first” is the first request of the query on the largest database ` +
      `(cold caches: the count of a new filter, pages not yet in the buffer pool).`,
  );
  out.push('');
  const header = [
    'Query',
    ...mariadb.map((d) => d.label),
    ...(small && large ? [`${large.split(' ')[1]}/${small.split(' ')[1]}`, `target ≤ ${TARGETS.queryRatio}×`] : []),
    ...(large ? [`first (${large.split(' ')[1]})`, `rows matched (${large.split(' ')[1]})`] : []),
    ...sqlite.map((d) => d.label),
  ];
  const rows: string[][] = [];
  for (const def of QUERIES) {
    const perDb = q.results[def.id];
    if (!perDb) continue;
    const cells = [escapeCell(`\`${q.labels[def.id] ?? def.label}\``)];
    for (const d of mariadb) {
      const m = perDb[d.label];
      cells.push(m ? `${ms(m.p50)} (${ms(m.p90)})${m.budgetHit ? ` [${m.samples.length}]` : ''}` : '–');
    }
    if (small && large) {
      const ratio = (perDb[large]?.p50 ?? NaN) / (perDb[small]?.p50 ?? NaN);
      cells.push(Number.isFinite(ratio) ? `${ratio.toFixed(1)}×` : '–');
      cells.push(targetApplies ? verdict(ratio <= TARGETS.queryRatio) : '(1M not run)');
    }
    if (large) {
      cells.push(ms(perDb[large]?.firstMs));
      cells.push(perDb[large] ? count(perDb[large].matched) : '–');
    }
    for (const d of sqlite) {
      const m = perDb[d.label];
      cells.push(m ? `${ms(m.p50)} (${ms(m.p90)})` : '–');
    }
    rows.push(cells);
  }
  out.push(
    table(
      header,
      rows,
      header.map((_, i) => (i === 0 ? 'l' : 'r')),
    ),
  );
  out.push('');
  out.push(
    '`[n]` after a cell: the query used up its time budget (`BENCH_QUERY_BUDGET_SECONDS`) and stopped after n timed requests. ' +
      'The fragments: `/00123` is in 10 invoice nrs at every size, `000012` in 11 order nrs, `Gdańsk–Berlin` in one route of 132 (about 0.76 % of the items), ' +
      '`Cargo` in about a quarter of the customer names; the misses `XQZ-4049` (a trigram no text has) and `Berlin 1000` (every trigram common, never together: item numbers stop at 999), ' +
      'and for by-nr `ORD/1999/0000001` and `ORD/2025/00000000` (eight zeros; nrs have seven digits).',
  );
  out.push('');
  out.push(`![p50 latency against rows, one line per query](${path.relative(path.dirname(REPORT_FILE), CHART_FILE)})`);
  out.push('');
  return out;
}

function throughputSection(t: NonNullable<BenchResults['throughput']>): string[] {
  const rows = t.rows.map((r) => [
    r.database,
    escapeCell(`\`${r.endpoint}\``),
    `${r.apiPerSecond.toFixed(0)}/s (p50 ${ms(r.apiP50Ms)})`,
    `${r.floorPerSecond.toFixed(0)}/s (p50 ${ms(r.floorP50Ms)})`,
    `${r.ratio.toFixed(2)}${r.sameBody === false ? ' (bodies differ!)' : ''}`,
    verdict(r.ratio >= TARGETS.listFloor),
  ]);
  return [
    '## List and lookup throughput against a floor',
    '',
    `Run of ${when(t.at)}. ${t.rows[0]!.requests} requests over ${t.rows[0]!.connections} keep-alive connections, API and floor alternated twice, the better round of each counted. ` +
      'The floor (test/bench/floor-server.ts, its own process like the API) runs the SQL the API runs for that answer — the kept count for the total, ' +
      'the page’s ids from the sort index, then those rows with their order rows (or the exact nr) — with the same driver (mysql2, better-sqlite3), ' +
      'and writes the same JSON through node:http (the benchmark checks the two bodies are the same bytes): no authentication, validation, rate limiting, logging or framework.',
    '',
    table(['Database', 'Request', 'API', 'Floor', 'API/floor', `target ≥ ${TARGETS.listFloor}`], rows, ['l', 'l', 'r', 'r', 'r', 'l']),
    '',
  ];
}

function uploadSection(u: NonNullable<BenchResults['upload']>): string[] {
  const rows = u.rows.map((r) => [
    r.stack,
    r.case,
    `${r.apiMiBps.toFixed(1)} MiB/s (p50 ${ms(r.apiP50Ms)})`,
    `${r.directMiBps.toFixed(1)} MiB/s (p50 ${ms(r.directP50Ms)})`,
    r.ratio.toFixed(2),
    verdict(r.ratio >= TARGETS.upload),
  ]);
  return [
    '## Uploads against a direct putObject',
    '',
    `Run of ${when(u.at)}. \`POST /v1/orders/{id}/files\` (multipart, \`category_id=1\`, fresh random bytes every round) against \`putObject\` of the same bytes ` +
      `with the \`minio\` client into the same S3 server (one PUT per file with its size, one file after the other), ${u.rows[0]!.rounds} rounds alternated after one untimed round; p50 of each.`,
    '',
    table(['Stack', 'Upload', 'API', 'putObject', 'API/putObject', `target ≥ ${TARGETS.upload}`], rows, ['l', 'l', 'r', 'r', 'r', 'l']),
    '',
    ...uploadStagesTable(u.rows),
  ];
}

/** A stage table's queue wait: none where the jobs ran in the API process. */
/**
 * Where the same rounds' store jobs went (ADR 0046: the API writes each file, a job per file commits its row, a run
 * that is not the job's first checking its object before), from the job process's histograms; runs of the code before
 * them have no stages.
 */
function uploadStagesTable(uploads: UploadRow[]): string[] {
  const timed = uploads.filter((r) => r.stages?.jobs);
  if (timed.length === 0) return [];
  const rows = timed.map((r) => {
    const s = r.stages!;
    return [r.stack, r.case, String(s.jobs), queueWait(s.waitMs), ms(s.lookup), ms(s.check), ms(s.commit)];
  });
  return [
    "Where the store jobs of those timed rounds went, means per job from the histograms of the process that ran them (`logistics_fair_share_wait_seconds` of the `uploads` queue, `logistics_upload_store_stage_seconds`): the wait from the job's add to its start in the worker, the look-up of its row and the check of its object (a HEAD; only a retried job, or one taken over from a worker that died, looks first: a job's first run skips both, ADR 0046 amended 2026-11-29), the insert and commit of its row; each stage's mean is over the jobs that ran it. The API adds a file's job once the whole request was read and that file's PUT is over.",
    '',
    table(['Stack', 'Upload', 'Jobs', 'Queue wait', 'Look-up', 'Check (HEAD)', 'Commit'], rows, ['l', 'l', 'r', 'r', 'r', 'r', 'r']),
    '',
  ];
}

function inprocessSection(i: NonNullable<BenchResults['inprocess']>): string[] {
  const row = (r: BenchResult, baseline: string, candidate: string) => [
    escapeCell(r.name.trim()),
    `${baseline}: ${ms(r.baselineMedianMs)}`,
    `${candidate}: ${ms(r.candidateMedianMs)}`,
    `${r.ratio.toFixed(1)}×`,
  ];
  return [
    '## In-process comparisons',
    '',
    `Run of ${when(i.at)}. Candidate and baseline in the benchmark process, interleaved, medians (test/bench/pdf-render.bench.ts, test/bench/invoice-list.bench.ts; the list on SQLite with ${count(i.invoiceList.invoices)} generated invoices).`,
    '',
    table(
      ['Benchmark', 'Baseline', 'Candidate', 'Speed-up'],
      [row(i.pdfRender, 'new browser per document', 'warm browser + page pool'), ...i.invoiceList.results.map((r) => row(r, 'no indexes', 'migrated schema'))],
      ['l', 'r', 'r', 'r'],
    ),
    '',
  ];
}

function seedSection(results: BenchResults): string[] {
  const rows = Object.values(results.seeds)
    .sort((a, b) => (a.engine === b.engine ? a.invoices - b.invoices : a.engine === 'mariadb' ? -1 : 1))
    .map((s) => [
      s.database,
      count(s.invoices),
      count(s.smallInvoices),
      bytes(s.info.bytes),
      seconds(s.info.loadSeconds),
      s.info.reindexStatus === 'ok' ? seconds(s.info.reindexSeconds) : s.info.reindexStatus,
      `${when(s.info.seededAt)}${s.info.reused ? ' (reused)' : ''}`,
      s.info.migrations.map((m) => m.slice(0, 3)).join(', '),
    ]);
  return [
    '## Data',
    '',
    'Seeded through the project’s migrations (`migrateLatest`), then `INSERT … SELECT` from MariaDB’s SEQUENCE engine (SQLite: a recursive CTE), ' +
      'in chunks, `ANALYZE TABLE`, then `pnpm cli search:reindex` as an operator would after a bulk load. Dates over three years ending on the day of seeding; ' +
      'types s/c/p (70/10/20 %); statuses paid, semipaid, overdue, issued; 5 branches; 5,000 customers in PL, DE, CZ, SK; one order row and one item per invoice. ' +
      'A database whose `bench_seed` marker matches is reused (`BENCH_RESEED=1` seeds again); load times are those of its seeding.',
    '',
    table(['Database', 'Invoices (big directory)', 'Small directory', 'On disk', 'Load', 'search:reindex', 'Seeded', 'Migrations'], rows, [
      'l',
      'r',
      'r',
      'r',
      'r',
      'r',
      'l',
      'l',
    ]),
    '',
  ];
}

function machineSection(m: Machine): string[] {
  return [
    '## Machine',
    '',
    table(
      ['', ''],
      [
        ['CPU', `${m.cpu}, ${m.cores} cores (shared)`],
        ['Memory', `${m.memoryGiB} GiB`],
        ['OS', m.os],
        ['Node.js', m.node],
        ['MariaDB', `${m.mariadb ?? '–'}${m.innodbBufferPoolMiB !== null ? ` (innodb_buffer_pool_size ${m.innodbBufferPoolMiB} MiB)` : ''}`],
        ['SQLite', m.sqlite ?? '–'],
        ['Chromium', m.chromium ?? '–'],
        ['Load average at start', m.loadAverage.join(', ')],
      ],
    ),
    '',
  ];
}

// ---------------------------------------------------------------- chart

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#ad494a'];
const DASHES = ['', '6 3', '2 3'];

function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const GROUP_TITLES: Record<string, string> = {
  page: 'Pages',
  filter: 'Filters (each alone)',
  sort: 'Sorts (sort_dir=asc)',
  search: 'search=',
  'by-nr': 'GET /v1/orders/by-nr',
  combined: 'Combined (from the issue)',
};

function gridLabel(v: number): string {
  if (v >= 1000) return `${v / 1000} s`;
  return `${Number(v.toPrecision(3))} ms`;
}

/**
 * p50 latency against rows, both axes logarithmic, MariaDB only: one panel
 * per group of queries (same scales everywhere), one line per query, and in
 * each panel a dotted line of slope "3× from the smallest size" for the
 * target.
 */
export function renderChart(results: BenchResults): string | null {
  const q = results.queries;
  if (!q) return null;
  const sizes = q.databases.filter((d) => d.engine === 'mariadb').sort((a, b) => a.n - b.n);
  if (sizes.length === 0) return null;
  const series = QUERIES.filter((def) => q.results[def.id]).map((def) => ({
    group: def.group,
    label: q.labels[def.id] ?? def.label,
    points: sizes.map((s) => ({ n: s.n, ms: q.results[def.id]![s.label]?.p50 ?? NaN })).filter((p) => Number.isFinite(p.ms) && p.ms > 0),
  }));
  const all = series.flatMap((s) => s.points.map((p) => p.ms));
  if (all.length === 0) return null;
  const yMin = 10 ** Math.floor(Math.log10(Math.min(...all)));
  const yMax = 10 ** Math.ceil(Math.log10(Math.max(...all)));
  const xMin = sizes[0]!.n;
  const xMax = sizes[sizes.length - 1]!.n;
  const groups = Object.keys(GROUP_TITLES).filter((g) => series.some((s) => s.group === g));
  const columns = 2;
  const panelW = 560;
  const panelH = 330;
  const plotW = 220;
  const plotH = 240;
  const W = columns * panelW + 70;
  const H = 70 + Math.ceil(groups.length / columns) * panelH;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, Arial, sans-serif" font-size="11">`,
  );
  parts.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  parts.push(`<text x="20" y="26" font-size="16" font-weight="bold">p50 latency against invoices in the client directory (MariaDB, log–log)</text>`);
  parts.push(
    `<text x="20" y="46" fill="#555">${xmlEscape(`pnpm bench, run of ${when(q.at)}; per_page=250; dotted grey: the target's steepest slope (3× from ${count(xMin)} to 1,000,000 rows)`)}</text>`,
  );
  groups.forEach((group, g) => {
    const ox = 20 + (g % columns) * panelW;
    const oy = 70 + Math.floor(g / columns) * panelH;
    const left = ox + 60;
    const top = oy + 24;
    const x = (n: number) => (xMax === xMin ? left + plotW / 2 : left + ((Math.log10(n) - Math.log10(xMin)) / (Math.log10(xMax) - Math.log10(xMin))) * plotW);
    const y = (v: number) => top + plotH - ((Math.log10(v) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * plotH;
    parts.push(`<text x="${ox}" y="${oy + 12}" font-size="13" font-weight="bold">${xmlEscape(GROUP_TITLES[group]!)}</text>`);
    for (let decade = yMin; decade <= yMax; decade *= 10) {
      for (const m of [1, 2, 5]) {
        const v = decade * m;
        if (v > yMax) break;
        const yy = y(v).toFixed(1);
        parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${yy}" y2="${yy}" stroke="${m === 1 ? '#ccc' : '#eee'}"/>`);
        if (m !== 5 || yMax / yMin <= 1000)
          parts.push(`<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" fill="#333">${xmlEscape(gridLabel(v))}</text>`);
      }
    }
    for (const size of sizes) {
      const xx = x(size.n).toFixed(1);
      parts.push(`<line x1="${xx}" x2="${xx}" y1="${top}" y2="${top + plotH}" stroke="#ddd"/>`);
      parts.push(`<text x="${xx}" y="${top + plotH + 16}" text-anchor="middle" fill="#333">${size.label.split(' ')[1]}</text>`);
    }
    parts.push(`<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#888"/>`);
    if (sizes.length > 1) {
      // Slope of "3x over 10k -> 1M", drawn across this panel's x range.
      const slope = Math.log10(3) / 2;
      const rise = slope * (Math.log10(xMax) - Math.log10(xMin));
      const start = yMin * 2;
      parts.push(
        `<line x1="${x(xMin).toFixed(1)}" y1="${y(start).toFixed(1)}" x2="${x(xMax).toFixed(1)}" y2="${y(start * 10 ** rise).toFixed(1)}" stroke="#777" stroke-dasharray="1 3"/>`,
      );
    }
    const members = series.filter((s) => s.group === group).sort((a, b) => (b.points[b.points.length - 1]?.ms ?? 0) - (a.points[a.points.length - 1]?.ms ?? 0));
    members.forEach((s, i) => {
      const color = PALETTE[i % PALETTE.length]!;
      const dash = DASHES[Math.floor(i / PALETTE.length) % DASHES.length]!;
      const pts = s.points.map((p) => `${x(p.n).toFixed(1)},${y(p.ms).toFixed(1)}`).join(' ');
      parts.push(`<g><title>${xmlEscape(`${s.label}: ${s.points.map((p) => `${count(p.n)} → ${ms(p.ms)}`).join(', ')}`)}</title>`);
      if (s.points.length > 1)
        parts.push(`<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="1.8"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`);
      for (const p of s.points) parts.push(`<circle cx="${x(p.n).toFixed(1)}" cy="${y(p.ms).toFixed(1)}" r="2.5" fill="${color}"/>`);
      parts.push('</g>');
      const lx = left + plotW + 14;
      const ly = top + 6 + i * 15;
      const first = s.points[0]?.ms;
      const last = s.points[s.points.length - 1]?.ms;
      const ratio = s.points.length > 1 && first && last ? ` ${(last / first).toFixed(1)}×` : '';
      parts.push(`<line x1="${lx}" x2="${lx + 18}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`);
      parts.push(
        `<text x="${lx + 23}" y="${ly + 4}" fill="#222">${xmlEscape(`${s.label.length > 31 ? `${s.label.slice(0, 30)}…` : s.label} ${ms(last)}${ratio}`)}</text>`,
      );
    });
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

// ---------------------------------------------------------------- files

export async function writeReport(root: string, results: BenchResults, reproduce: string): Promise<{ markdown: string; missed: number }> {
  await mkdir(path.join(root, 'docs'), { recursive: true });
  await writeFile(path.join(root, RESULTS_FILE), `${JSON.stringify(results, null, 1)}\n`);
  const chart = renderChart(results);
  if (chart) await writeFile(path.join(root, CHART_FILE), chart);
  const { markdown, missed } = renderMarkdown(results, reproduce);
  let kept = '';
  try {
    const previous = await readFile(path.join(root, REPORT_FILE), 'utf8');
    const at = previous.indexOf(KEEP_MARKER);
    if (at >= 0) kept = previous.slice(at + KEEP_MARKER.length);
  } catch {
    // first report
  }
  await writeFile(path.join(root, REPORT_FILE), `${markdown}\n${KEEP_MARKER}${kept || '\n'}`);
  return { markdown, missed };
}
