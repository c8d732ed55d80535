import path from 'node:path';

/**
 * Everything `pnpm bench` reads from the environment, read once. Sizes,
 * parts and request counts are bounded, so a run always ends by itself.
 */
export const ROOT = path.resolve(import.meta.dirname, '../..');
/** Scratch space: SQLite databases, API data dirs, S3 server files (git-ignored). */
export const WORK_DIR = path.join(ROOT, '.tmp', 'bench');

export const PARTS = ['seed', 'queries', 'throughput', 'pdf', 'upload', 'inprocess', 'events', 'tracing', 'startup', 'fairness', 'exports'] as const;
/** `seed` alone only prepares the databases; the others imply it where they need data. */
const DEFAULT_PARTS = PARTS.filter((part) => part !== 'seed');
export type Part = (typeof PARTS)[number];

export interface Size {
  /** As written in BENCH_SIZES and in the report: 10k, 100k, 1m. */
  label: string;
  /** Invoices (and orders) in the big directory. */
  n: number;
}

function env(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(name: string, fallback: number, min = 1): number {
  const raw = env(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}, not "${raw}"`);
  return value;
}

/** `10k`, `100k`, `1m`, `2500`: a count of invoices. */
export function parseSize(raw: string, variable = 'BENCH_SIZES'): Size {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(raw.trim());
  if (!match) throw new Error(`${variable}: "${raw}" is not a size such as 10k, 100k or 1m`);
  const factor = { '': 1, k: 1_000, m: 1_000_000 }[match[2]!.toLowerCase() as '' | 'k' | 'm'];
  const n = Math.round(Number(match[1]) * factor);
  if (n < 1_000 || n > 5_000_000) throw new Error(`${variable}: ${raw} is outside 1k..5m`);
  return { label: formatSizeLabel(n), n };
}

export function formatSizeLabel(n: number): string {
  if (n % 1_000_000 === 0) return `${n / 1_000_000}m`;
  if (n % 1_000 === 0) return `${n / 1_000}k`;
  return String(n);
}

function parseSizes(variable = 'BENCH_SIZES', fallback = '10k,100k,1m'): Size[] {
  const raw = env(variable) ?? fallback;
  const sizes = raw
    .split(',')
    .filter((part) => part.trim() !== '')
    .map((part) => parseSize(part, variable));
  const unique = [...new Map(sizes.map((size) => [size.n, size])).values()].sort((a, b) => a.n - b.n);
  if (unique.length === 0) throw new Error(`${variable} names no size`);
  return unique;
}

function parseParts(): Part[] {
  const raw = env('BENCH_PARTS') ?? DEFAULT_PARTS.join(',');
  const parts = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  for (const part of parts) {
    if (!(PARTS as readonly string[]).includes(part)) throw new Error(`BENCH_PARTS: unknown part "${part}" (known: ${PARTS.join(', ')})`);
  }
  return PARTS.filter((part) => parts.includes(part));
}

function parseSqliteSize(): Size | null {
  const raw = env('BENCH_SQLITE') ?? '100k';
  if (['0', 'off', 'no', 'false'].includes(raw.toLowerCase())) return null;
  return parseSize(raw, 'BENCH_SQLITE');
}

export interface BenchConfig {
  sizes: Size[];
  /** The embedded profile's database, or null (BENCH_SQLITE=0). */
  sqlite: Size | null;
  parts: Part[];
  /** Timed requests per query and database (BENCH_ROUNDS). */
  rounds: number;
  /** Untimed requests before them. */
  warmup: number;
  /** Seconds of timed requests one query may take per database before it stops early (at least 3 samples). */
  queryBudgetSeconds: number;
  /** Drop and seed again even when a seeded database matches. */
  reseed: boolean;
  /** Server root of MariaDB, e.g. mysql://root@127.0.0.1:3306 */
  mariadbUrl: string;
  redisUrl: string;
  /** Run the PDF and upload parts on Redis + a worker process as well (when Redis answers). */
  queueStack: boolean;
  throughputRequests: number;
  connections: number;
  pdfConcurrency: number[];
  uploadRounds: number;
  chromiumPath: string;
  /** Exit 1 when a target is missed. */
  strict: boolean;
  /** Events in the big directory of each feed database (BENCH_EVENTS_FEED), smallest first. */
  eventsFeedSizes: Size[];
  /** Invoices of the write-cost load (BENCH_EVENTS_WRITE). */
  eventsWriteInvoices: number;
  /** Timed feed pages per size, sequential (BENCH_EVENTS_FEED_ROUNDS). */
  eventsFeedRounds: number;
  /** Feed pages per throughput round (BENCH_EVENTS_FEED_REQUESTS). */
  eventsFeedRequests: number;
  /** Writes timed one at a time for commit-to-receipt and for the long poll (BENCH_EVENTS_LATENCY_SAMPLES). */
  eventsLatencySamples: number;
  /** API and floor delivery rounds, alternated (BENCH_EVENTS_DELIVERY_ROUNDS). */
  eventsDeliveryRounds: number;
  /** BENCH_EVENTS_ONLY=delivery: only the delivery sub-part; the feed and write figures are kept from the last run. */
  eventsOnlyDelivery: boolean;
  /** The fairness part (issue 25): the ordinary tenant's PDFs and writes per phase, the abusive tenant's PDFs in flight and long polls held. */
  fairness: { pdfs: number; writes: number; burst: number; polls: number };
  /** The exports part (issue 27): invoices of the timed export (about), of the RSS export, the other client's PDFs per phase. */
  exports: { invoices: number; rssInvoices: number; pdfs: number };
}

export function loadBenchConfig(): BenchConfig {
  return {
    sizes: parseSizes(),
    sqlite: parseSqliteSize(),
    parts: parseParts(),
    rounds: integer('BENCH_ROUNDS', 15, 3),
    warmup: integer('BENCH_WARMUP', 3, 0),
    queryBudgetSeconds: integer('BENCH_QUERY_BUDGET_SECONDS', 90),
    reseed: env('BENCH_RESEED') === '1',
    mariadbUrl: (env('BENCH_MARIADB_URL') ?? 'mysql://root@127.0.0.1:3306').replace(/(?<!\/)\/+$/, ''),
    redisUrl: env('BENCH_REDIS_URL') ?? 'redis://127.0.0.1:6379',
    queueStack: env('BENCH_QUEUE_STACK') !== '0',
    throughputRequests: integer('BENCH_THROUGHPUT_REQUESTS', 400, 10),
    connections: integer('BENCH_CONNECTIONS', 10),
    pdfConcurrency: (env('BENCH_PDF_CONCURRENCY') ?? '1,4,16').split(',').map((c) => {
      const value = Number(c);
      if (!Number.isInteger(value) || value < 1 || value > 64) throw new Error(`BENCH_PDF_CONCURRENCY: "${c}" is not 1..64`);
      return value;
    }),
    uploadRounds: integer('BENCH_UPLOAD_ROUNDS', 11),
    chromiumPath: env('CHROMIUM_PATH') ?? '/usr/bin/chromium',
    strict: env('BENCH_STRICT') === '1',
    eventsFeedSizes: parseSizes('BENCH_EVENTS_FEED', '10k,1m'),
    eventsWriteInvoices: parseSize(env('BENCH_EVENTS_WRITE') ?? '100k', 'BENCH_EVENTS_WRITE').n,
    eventsFeedRounds: integer('BENCH_EVENTS_FEED_ROUNDS', 400, 10),
    eventsFeedRequests: integer('BENCH_EVENTS_FEED_REQUESTS', 1000, 10),
    eventsLatencySamples: integer('BENCH_EVENTS_LATENCY_SAMPLES', 40, 3),
    eventsDeliveryRounds: integer('BENCH_EVENTS_DELIVERY_ROUNDS', 2),
    eventsOnlyDelivery: eventsOnly() === 'delivery',
    fairness: {
      pdfs: integer('BENCH_FAIRNESS_PDFS', 30, 5),
      writes: integer('BENCH_FAIRNESS_WRITES', 20, 3),
      burst: integer('BENCH_FAIRNESS_BURST', 48),
      polls: integer('BENCH_FAIRNESS_POLLS', 8),
    },
    exports: {
      invoices: integer('BENCH_EXPORTS_INVOICES', 2_000, 10),
      rssInvoices: integer('BENCH_EXPORTS_RSS_INVOICES', 5_000, 1_000),
      pdfs: integer('BENCH_EXPORTS_PDFS', 20, 5),
    },
  };
}

function eventsOnly(): 'delivery' | undefined {
  const raw = env('BENCH_EVENTS_ONLY');
  if (raw === undefined || raw === '') return undefined;
  if (raw !== 'delivery') throw new Error(`BENCH_EVENTS_ONLY: "${raw}" is not delivery`);
  return raw;
}

/** mysql://…/logi_bench_1m */
export function databaseName(size: Size): string {
  return `logi_bench_${size.label}`;
}
