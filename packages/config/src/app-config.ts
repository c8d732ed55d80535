import path from 'node:path';
import { z } from 'zod';
import { databaseTlsOf } from './database-tls.js';
import { parseSentinelList, type RedisEndpoint } from './redis-endpoint.js';
import { parseRetrySchedule } from './retry-schedule.js';
import { parseWorkerQueues, WORKER_QUEUE_NAMES, type WorkerQueueName } from './worker-queues.js';

/** The contract's retry delays, in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

/** Thrown when a variable is set but wrong; the process prints `message` alone and exits. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Configuration error: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

const positiveInt = (name: string, min = 1) =>
  z.string().transform((value, ctx) => {
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min) {
      ctx.addIssue({ code: 'custom', message: `must be a whole number >= ${min} (got "${value}")`, path: [name] });
      return z.NEVER;
    }
    return Number(value);
  });

/** WORKER_QUEUES (parseWorkerQueues): the names it picks, in WORKER_QUEUE_NAMES' order. */
const workerQueues = (name: string) =>
  z.string().transform((value, ctx) => {
    const parsed = parseWorkerQueues(value);
    if ('unknown' in parsed) {
      ctx.addIssue({
        code: 'custom',
        message: `must be all, interactive, bulk or a comma list of ${WORKER_QUEUE_NAMES.join(', ')} (got "${parsed.unknown}")`,
        path: [name],
      });
      return z.NEVER;
    }
    return parsed.queues;
  });

/** A TCP port: 0..65535 (0 means "any free port" for PORT, "off" for METRICS_PORT). */
const portNumber = (name: string) =>
  z.string().transform((value, ctx) => {
    if (!/^\d+$/.test(value) || Number(value) > 65_535) {
      ctx.addIssue({ code: 'custom', message: `must be a port number from 0 to 65535 (got "${value}")`, path: [name] });
      return z.NEVER;
    }
    return Number(value);
  });

/** A database URL: mysql:// or mariadb://, with its TLS options checked (database-tls.ts). */
function databaseUrl(name: string) {
  return urlWithScheme(name, ['mysql', 'mariadb']).transform((value, ctx) => {
    const problem = tlsProblem(value);
    if (problem === null) return value;
    ctx.addIssue({ code: 'custom', message: problem, path: [name] });
    return z.NEVER;
  });
}

function tlsProblem(url: string): string | null {
  try {
    databaseTlsOf(url);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

function urlWithScheme(name: string, schemes: string[]) {
  return z.string().transform((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      // Never the value: a URL may carry a password.
      ctx.addIssue({ code: 'custom', message: 'is not a valid URL', path: [name] });
      return z.NEVER;
    }
    if (!schemes.includes(url.protocol.replace(/:$/, ''))) {
      ctx.addIssue({ code: 'custom', message: `must use one of the schemes ${schemes.join(', ')} (got "${url.protocol}")`, path: [name] });
      return z.NEVER;
    }
    return value;
  });
}

/** One or more URLs, comma-separated; an entry is named by its place, so a password in it is never echoed. */
function urlList(name: string, schemes: string[]) {
  return z.string().transform((value, ctx) => {
    const urls = value.split(',').map((entry) => entry.trim());
    for (const [i, entry] of urls.entries()) {
      const fail = (problem: string) => ctx.addIssue({ code: 'custom', message: `entry ${i + 1} of ${urls.length} ${problem}`, path: [name] });
      if (entry === '') {
        fail('is empty (a comma-separated list of URLs)');
        return z.NEVER;
      }
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        fail('is not a valid URL');
        return z.NEVER;
      }
      if (!schemes.includes(url.protocol.replace(/:$/, ''))) {
        fail(`must use one of the schemes ${schemes.join(', ')} (got "${url.protocol}")`);
        return z.NEVER;
      }
      const problem = tlsProblem(entry);
      if (problem !== null) {
        fail(problem);
        return z.NEVER;
      }
    }
    return urls;
  });
}

/** The command that prints a new SECRETS_ENCRYPTION_KEYS entry. */
export const GENERATE_KEY_COMMAND = 'pnpm cli secrets:generate-key';

/**
 * SECRETS_ENCRYPTION_KEYS: `<id>:<base64 of 32 bytes>`, comma-separated; the first encrypts, all decrypt. An entry is
 * named by its place, never echoed: it is key material.
 */
function secretKeyList(name: string) {
  return z.string().transform((value, ctx) => {
    const entries = value.split(',').map((entry) => entry.trim());
    const keys: Array<{ id: string; key: Buffer }> = [];
    for (const [i, entry] of entries.entries()) {
      const fail = (problem: string) => {
        ctx.addIssue({ code: 'custom', message: `entry ${i + 1} of ${entries.length} ${problem}`, path: [name] });
        return z.NEVER;
      };
      const match = /^([A-Za-z0-9_.-]{1,32}):([A-Za-z0-9+/]+={0,2})$/.exec(entry);
      if (!match) return fail(`must be <id>:<base64 of 32 bytes> (id: 1-32 letters, digits, ".", "_" or "-"; make one with \`${GENERATE_KEY_COMMAND}\`)`);
      const key = Buffer.from(match[2]!, 'base64');
      if (key.length !== 32) return fail(`has a key of ${key.length} bytes; AES-256 needs 32 (make one with \`${GENERATE_KEY_COMMAND}\`)`);
      if (keys.some((k) => k.id === match[1])) return fail(`repeats the key id "${match[1]}"`);
      keys.push({ id: match[1]!, key });
    }
    return keys;
  });
}

function timeZone(value: string, ctx: z.RefinementCtx): string {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return value;
  } catch {
    ctx.addIssue({ code: 'custom', message: `is not a known IANA time zone (got "${value}")`, path: ['APP_TIMEZONE'] });
    return z.NEVER;
  }
}

const schema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: portNumber('PORT').default(3000),
  DATA_DIR: z.string().default('./data'),
  /** MariaDB/MySQL; its options (?ssl-mode=…&ssl-ca=…&ssl-cert=…&ssl-key=…) are TLS (database-tls.ts). */
  DATABASE_URL: databaseUrl('DATABASE_URL').optional(),
  /** Read replicas of DATABASE_URL (comma-separated URLs) for the read-only paths: lists, lookups, the event feed, PDF data. */
  DATABASE_READ_URL: urlList('DATABASE_READ_URL', ['mysql', 'mariadb']).optional(),
  /** A replica further behind the primary than this (Seconds_Behind_Master) is skipped until it catches up. */
  DB_REPLICA_MAX_LAG_SECONDS: positiveInt('DB_REPLICA_MAX_LAG_SECONDS', 0).default(5),
  REDIS_URL: urlWithScheme('REDIS_URL', ['redis', 'rediss']).optional(),
  /** Sentinels to ask for the master (host:port,...); with them, REDIS_URL gives only credentials, database and TLS. */
  REDIS_SENTINELS: z
    .string()
    .transform((value, ctx) => {
      const sentinels = parseSentinelList(value);
      if (typeof sentinels === 'string') {
        ctx.addIssue({ code: 'custom', message: sentinels, path: ['REDIS_SENTINELS'] });
        return z.NEVER;
      }
      return sentinels;
    })
    .optional(),
  /** The master group's name in the sentinels' configuration (`sentinel monitor <name> ...`). */
  REDIS_SENTINEL_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,128}$/, { error: 'must be 1-128 letters, digits, _ . or - (the name in "sentinel monitor <name> ...")' })
    .optional(),
  /** Prefix of every Redis key (queues, rate limits), so deployments and test runs sharing a Redis stay apart. */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'must be 1-64 letters, digits, _ . or -' })
    .default('logistics'),
  S3_ENDPOINT: urlWithScheme('S3_ENDPOINT', ['http', 'https']).optional(),
  S3_ACCESS_KEY: z.string().optional(),
  S3_SECRET_KEY: z.string().optional(),
  S3_BUCKET: z.string().optional(),
  S3_REGION: z.string().default('us-east-1'),
  /** The S3 address clients reach, when it differs from S3_ENDPOINT (a container name): file links are presigned for it. */
  S3_PUBLIC_ENDPOINT: urlWithScheme('S3_PUBLIC_ENDPOINT', ['http', 'https']).optional(),
  /** The HMAC key of the API's own file links (embedded profile); unset: a random key kept in DATA_DIR/file-link.key. */
  FILE_LINK_SECRET: z.string().min(32, { error: 'must be at least 32 characters (a random secret, e.g. openssl rand -hex 32)' }).optional(),
  CHROMIUM_PATH: z.string().optional(),
  APP_TIMEZONE: z.string().transform(timeZone).default('UTC'),
  RATE_LIMIT_MAX: positiveInt('RATE_LIMIT_MAX').default(60),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt('RATE_LIMIT_WINDOW_SECONDS').default(60),
  UPLOAD_MAX_FILES: positiveInt('UPLOAD_MAX_FILES').default(20),
  /** MiB (2^20 bytes) a client directory may store per calendar day in APP_TIMEZONE, across all processes; 0 = no limit. */
  UPLOAD_QUOTA_MB_PER_DAY: positiveInt('UPLOAD_QUOTA_MB_PER_DAY', 0).default(0),
  METRICS_HOST: z.string().default('127.0.0.1'),
  METRICS_PORT: portNumber('METRICS_PORT').default(9464),
  /** How long the API waits for a job (PDF render, file store) before answering 503. */
  JOB_TIMEOUT_MS: positiveInt('JOB_TIMEOUT_MS').default(30_000),
  /**
   * A worker holds each job's lock this long and renews it halfway; a worker
   * that dies loses its jobs to another worker within about 1.5 times this.
   */
  JOB_LOCK_MS: positiveInt('JOB_LOCK_MS', 1000).default(10_000),
  /** MariaDB: a statement of the API or a worker with no answer by then fails (503) and its connection is dropped. */
  DB_QUERY_TIMEOUT_MS: positiveInt('DB_QUERY_TIMEOUT_MS').default(10_000),
  /** MariaDB: connections each process may hold to the primary, and to each read replica. */
  DB_POOL_MAX: positiveInt('DB_POOL_MAX').default(10),
  /** Jobs one worker process runs at once. */
  WORKER_CONCURRENCY: positiveInt('WORKER_CONCURRENCY').default(2),
  /** What a worker process takes: all, interactive, bulk, or a comma list of queue names (WORKER_QUEUE_NAMES). */
  WORKER_QUEUES: workerQueues('WORKER_QUEUES').default([...WORKER_QUEUE_NAMES]),
  /** The PDF renderer restarts its browser after this many documents. */
  PDF_RENDERS_PER_BROWSER: positiveInt('PDF_RENDERS_PER_BROWSER').default(500),
  /** A render that takes longer is killed. */
  PDF_RENDER_TIMEOUT_MS: positiveInt('PDF_RENDER_TIMEOUT_MS').default(15_000),
  /** Rendered PDFs are kept in storage (`pdf-cache/`) this long at most. */
  PDF_CACHE_MAX_AGE_HOURS: positiveInt('PDF_CACHE_MAX_AGE_HOURS').default(720),
  /** At most this many PDFs are kept; 0 turns the cache off (every download renders). */
  PDF_CACHE_MAX_OBJECTS: positiveInt('PDF_CACHE_MAX_OBJECTS', 0).default(10_000),
  /** MiB of recently served PDFs each API process keeps in memory beside the storage cache; 0 keeps none. */
  PDF_MEMORY_CACHE_MB: positiveInt('PDF_MEMORY_CACHE_MB', 0).default(64),
  /** Published events are kept this many days; a feed cursor older than that answers 410. */
  EVENTS_RETENTION_DAYS: positiveInt('EVENTS_RETENTION_DAYS').default(30),
  /** How often each process looks for captured changes to publish as events (back to back while a backlog lasts). */
  EVENTS_PUBLISH_INTERVAL_MS: positiveInt('EVENTS_PUBLISH_INTERVAL_MS', 10).default(250),
  /** Long polls (`wait` > 0) one client directory may hold open at once on one API process. */
  EVENTS_MAX_WAITING: positiveInt('EVENTS_MAX_WAITING').default(5),
  /** Exports: matching invoices one export may hold, exports queued or running per directory, hours an archive is kept. */
  EXPORT_MAX_INVOICES: positiveInt('EXPORT_MAX_INVOICES').default(10_000),
  EXPORT_MAX_ACTIVE: positiveInt('EXPORT_MAX_ACTIVE').default(2),
  EXPORT_RETENTION_HOURS: positiveInt('EXPORT_RETENTION_HOURS').default(72),
  /** The bytes (MiB) of archives one directory keeps at once; one more POST /v1/exports past it is 429. */
  EXPORT_STORAGE_MB_PER_DIRECTORY: positiveInt('EXPORT_STORAGE_MB_PER_DIRECTORY').default(2048),
  /** How long a runner's claim on an export lasts without renewal: a runner that died is replaced after it. */
  EXPORT_LEASE_SECONDS: positiveInt('EXPORT_LEASE_SECONDS', 2).default(30),
  /** A webhook attempt (connect, send, answer's status line) ends after this long. */
  WEBHOOK_TIMEOUT_MS: positiveInt('WEBHOOK_TIMEOUT_MS', 100).default(10_000),
  /** Seconds before each retry of a failed attempt, in turn; then the delivery is marked failed. */
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .refine((value) => parseRetrySchedule(value) !== null, { error: 'must be a comma-separated list of whole seconds, each at least 1 (e.g. 5,300,1800)' })
    .transform((value) => parseRetrySchedule(value)!)
    .default(DEFAULT_RETRY_SCHEDULE),
  /** An endpoint whose every attempt failed for this many hours is disabled. */
  WEBHOOK_DISABLE_AFTER_HOURS: positiveInt('WEBHOOK_DISABLE_AFTER_HOURS').default(120),
  /** Webhook endpoints per client directory. */
  WEBHOOK_MAX_ENDPOINTS: positiveInt('WEBHOOK_MAX_ENDPOINTS').default(10),
  /** Allow http and hosts that are or resolve to loopback/private/link-local addresses (tests, on-premise receivers). */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z
    .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
    .transform((v) => v === 'true' || v === '1')
    .default(false),
  /** Keys that encrypt webhook secrets at rest: `<id>:<base64 of 32 bytes>`, comma-separated; the first encrypts, all decrypt. */
  SECRETS_ENCRYPTION_KEYS: secretKeyList('SECRETS_ENCRYPTION_KEYS').optional(),
  /**
   * How long the API (and the queue dashboard) keeps an idle kept-alive connection open: above a load balancer's idle
   * timeout (60 s on AWS ALB and most others), so that the balancer closes it first and never reuses one the server is
   * closing (a sporadic 502). The headers timeout is a second above it.
   */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt('HTTP_KEEP_ALIVE_TIMEOUT_MS', 1000).default(65_000),
  /** Webhook attempts in flight per delivering process, and to any one endpoint from it. */
  WEBHOOK_CONCURRENCY: positiveInt('WEBHOOK_CONCURRENCY').default(16),
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: positiveInt('WEBHOOK_CONCURRENCY_PER_ENDPOINT').default(4),
  /** Webhook attempts in flight to one client directory's endpoints, per delivering process. */
  WEBHOOK_MAX_IN_FLIGHT_PER_DIRECTORY: positiveInt('WEBHOOK_MAX_IN_FLIGHT_PER_DIRECTORY').default(8),
  /**
   * Reverse proxies in front of the API that each append their peer to X-Forwarded-For: the client address is that
   * many entries from the right, so entries a client wrote itself are never read. `true` is 1 hop, `false` 0 (off).
   */
  TRUST_PROXY: z
    .string()
    .transform((value, ctx) => {
      if (value === 'true' || value === 'false') return value === 'true' ? 1 : 0;
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
        ctx.addIssue({
          code: 'custom',
          message: `must be the number of trusted proxy hops, a whole number >= 0, or true (1) or false (0) (got "${value}")`,
          path: ['TRUST_PROXY'],
        });
        return z.NEVER;
      }
      return Number(value);
    })
    .default(0),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Where the repository's docs/ are published (a Git host's file view): the OpenAPI document's guide links start there. */
  DOCS_BASE_URL: z
    .string()
    .regex(/^https?:\/\/[^\s]+$/, { error: 'must be an http:// or https:// address' })
    .optional(),
  /** The queue dashboard (/admin/queues, Redis profile) is on only when both are set; HTTP Basic credentials. */
  DASHBOARD_USER: z
    .string()
    .regex(/^[^:]+$/, { error: 'must not contain ":" (HTTP Basic user names cannot)' })
    .optional(),
  DASHBOARD_PASSWORD: z.string().optional(),
  /** The dashboard's own listener, apart from the API's port like the metrics (0 = off). */
  DASHBOARD_HOST: z.string().default('127.0.0.1'),
  DASHBOARD_PORT: portNumber('DASHBOARD_PORT').default(9466),
  /** The dashboard may change the queues (add, retry, promote, clean, empty, obliterate jobs); read-only unless true. */
  DASHBOARD_WRITE: z
    .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
    .transform((v) => v === 'true' || v === '1')
    .default(false),
});

export type AppConfig = {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  /** DATABASE_READ_URL's replicas, in order; empty = every read on the primary. */
  databaseReadUrls: string[];
  dbReplicaMaxLagSeconds: number;
  /** Redis: REDIS_URL, or a Sentinel group (REDIS_SENTINELS); null = no Redis (jobs in-process, limits in memory). */
  redis: RedisEndpoint | null;
  redisPrefix: string;
  s3: { endPoint: string; accessKey: string; secretKey: string; bucket: string; region: string; publicEndPoint: string | null } | null;
  /** FILE_LINK_SECRET; null = a random key generated once and kept in DATA_DIR (see ADR 0040). */
  fileLinkSecret: string | null;
  chromiumPath: string | null;
  timeZone: string;
  rateLimit: { max: number; windowSeconds: number };
  uploadMaxFiles: number;
  /** UPLOAD_QUOTA_MB_PER_DAY in bytes; 0 = no limit. */
  uploadQuotaBytesPerDay: number;
  metrics: { host: string; port: number };
  /** HTTP_KEEP_ALIVE_TIMEOUT_MS: idle kept-alive connections of the API and the dashboard close after it. */
  httpKeepAliveTimeoutMs: number;
  jobTimeoutMs: number;
  jobLockMs: number;
  databaseQueryTimeoutMs: number;
  /** DB_POOL_MAX: connections per process to the primary, and to each replica. */
  databasePoolMax: number;
  workerConcurrency: number;
  /** WORKER_QUEUES: what a worker process takes, in WORKER_QUEUE_NAMES' order (the API's in-process queue takes everything). */
  workerQueues: readonly WorkerQueueName[];
  pdf: { rendersPerBrowser: number; renderTimeoutMs: number };
  /** The PDF cache's bounds; maxObjects 0 = off. */
  pdfCache: { maxAgeHours: number; maxObjects: number; memoryBytes: number };
  events: { retentionDays: number; publishIntervalMs: number };
  eventsMaxWaiting: number;
  exports: { maxInvoices: number; maxActive: number; retentionHours: number; leaseMs: number; storageBytesPerDirectory: number };
  webhooks: {
    timeoutMs: number;
    retryScheduleSeconds: number[];
    disableAfterHours: number;
    maxEndpoints: number;
    allowPrivateTargets: boolean;
    concurrency: number;
    concurrencyPerEndpoint: number;
    maxInFlightPerDirectory: number;
  };
  /** SECRETS_ENCRYPTION_KEYS in order (the first encrypts); empty = none configured (the embedded profile then uses its own key in DATA_DIR). */
  secretKeys: Array<{ id: string; key: Buffer }>;
  /** Trusted proxy hops in front of the API (TRUST_PROXY); 0 = X-Forwarded-For is ignored. */
  trustProxyHops: number;
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  /** Base of the guide links in the OpenAPI document; null = repository paths (docs/integrate/...). */
  docsBaseUrl: string | null;
  /** The queue dashboard: credentials, its own listener, whether it may change the queues; null = off. */
  dashboard: { user: string; password: string; host: string; port: number; write: boolean } | null;
};

/** Every variable the configuration reads, in the schema's order (.env.example and docs/operate/configuration.md name each). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

/**
 * Reads the configuration once. Empty variables count as unset; a value that
 * is set but wrong throws ConfigError naming the variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const present = Object.fromEntries(
    Object.keys(schema.shape)
      .map((key) => [key, env[key]?.trim()] as const)
      .filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    throw new ConfigError(variable, issue.code === 'custom' ? issue.message : `is invalid: ${issue.message}`);
  }
  const c = parsed.data;
  const s3Vars = { S3_ENDPOINT: c.S3_ENDPOINT, S3_ACCESS_KEY: c.S3_ACCESS_KEY, S3_SECRET_KEY: c.S3_SECRET_KEY, S3_BUCKET: c.S3_BUCKET };
  const setS3 = Object.entries(s3Vars).filter(([, v]) => v !== undefined);
  if (setS3.length > 0 && setS3.length < 4) {
    const missing = Object.entries(s3Vars).find(([, v]) => v === undefined)![0];
    throw new ConfigError(missing, 'must be set when any S3_* variable is set');
  }
  if ((c.REDIS_SENTINELS === undefined) !== (c.REDIS_SENTINEL_NAME === undefined)) {
    throw c.REDIS_SENTINELS === undefined
      ? new ConfigError(
          'REDIS_SENTINELS',
          'must be set too: REDIS_SENTINEL_NAME names a master group, and REDIS_SENTINELS lists the sentinels to ask for it (host:port,...)',
        )
      : new ConfigError(
          'REDIS_SENTINEL_NAME',
          'must be set when REDIS_SENTINELS is set: the name of the master group the sentinels monitor ("sentinel monitor <name> ...")',
        );
  }
  if (c.DATABASE_READ_URL !== undefined && c.DATABASE_URL === undefined) {
    throw new ConfigError(
      'DATABASE_READ_URL',
      'needs DATABASE_URL: read replicas serve reads of a MariaDB/MySQL primary, and without DATABASE_URL the database is the embedded SQLite file',
    );
  }
  if ((c.DASHBOARD_USER === undefined) !== (c.DASHBOARD_PASSWORD === undefined)) {
    const missing = c.DASHBOARD_USER === undefined ? 'DASHBOARD_USER' : 'DASHBOARD_PASSWORD';
    throw new ConfigError(missing, 'must be set too: the queue dashboard needs both DASHBOARD_USER and DASHBOARD_PASSWORD (or neither, to keep it off)');
  }
  return {
    host: c.HOST,
    port: c.PORT,
    dataDir: path.resolve(c.DATA_DIR),
    databaseUrl: c.DATABASE_URL ?? null,
    databaseReadUrls: c.DATABASE_READ_URL ?? [],
    dbReplicaMaxLagSeconds: c.DB_REPLICA_MAX_LAG_SECONDS,
    redis: c.REDIS_SENTINELS
      ? { sentinels: c.REDIS_SENTINELS, name: c.REDIS_SENTINEL_NAME!, url: c.REDIS_URL ?? null }
      : c.REDIS_URL
        ? { url: c.REDIS_URL }
        : null,
    redisPrefix: c.REDIS_PREFIX,
    s3:
      setS3.length === 4
        ? {
            endPoint: c.S3_ENDPOINT!,
            accessKey: c.S3_ACCESS_KEY!,
            secretKey: c.S3_SECRET_KEY!,
            bucket: c.S3_BUCKET!,
            region: c.S3_REGION,
            publicEndPoint: c.S3_PUBLIC_ENDPOINT ?? null,
          }
        : null,
    fileLinkSecret: c.FILE_LINK_SECRET ?? null,
    chromiumPath: c.CHROMIUM_PATH ?? null,
    timeZone: c.APP_TIMEZONE,
    rateLimit: { max: c.RATE_LIMIT_MAX, windowSeconds: c.RATE_LIMIT_WINDOW_SECONDS },
    uploadMaxFiles: c.UPLOAD_MAX_FILES,
    uploadQuotaBytesPerDay: c.UPLOAD_QUOTA_MB_PER_DAY * 1024 * 1024,
    metrics: { host: c.METRICS_HOST, port: c.METRICS_PORT },
    httpKeepAliveTimeoutMs: c.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    jobTimeoutMs: c.JOB_TIMEOUT_MS,
    jobLockMs: c.JOB_LOCK_MS,
    databaseQueryTimeoutMs: c.DB_QUERY_TIMEOUT_MS,
    databasePoolMax: c.DB_POOL_MAX,
    workerConcurrency: c.WORKER_CONCURRENCY,
    workerQueues: c.WORKER_QUEUES,
    pdf: { rendersPerBrowser: c.PDF_RENDERS_PER_BROWSER, renderTimeoutMs: c.PDF_RENDER_TIMEOUT_MS },
    pdfCache: { maxAgeHours: c.PDF_CACHE_MAX_AGE_HOURS, maxObjects: c.PDF_CACHE_MAX_OBJECTS, memoryBytes: c.PDF_MEMORY_CACHE_MB * 1024 * 1024 },
    events: { retentionDays: c.EVENTS_RETENTION_DAYS, publishIntervalMs: c.EVENTS_PUBLISH_INTERVAL_MS },
    eventsMaxWaiting: c.EVENTS_MAX_WAITING,
    exports: {
      maxInvoices: c.EXPORT_MAX_INVOICES,
      maxActive: c.EXPORT_MAX_ACTIVE,
      retentionHours: c.EXPORT_RETENTION_HOURS,
      leaseMs: c.EXPORT_LEASE_SECONDS * 1000,
      storageBytesPerDirectory: c.EXPORT_STORAGE_MB_PER_DIRECTORY * 1024 * 1024,
    },
    webhooks: {
      timeoutMs: c.WEBHOOK_TIMEOUT_MS,
      retryScheduleSeconds: c.WEBHOOK_RETRY_SCHEDULE,
      disableAfterHours: c.WEBHOOK_DISABLE_AFTER_HOURS,
      maxEndpoints: c.WEBHOOK_MAX_ENDPOINTS,
      allowPrivateTargets: c.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      concurrency: c.WEBHOOK_CONCURRENCY,
      concurrencyPerEndpoint: c.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
      maxInFlightPerDirectory: c.WEBHOOK_MAX_IN_FLIGHT_PER_DIRECTORY,
    },
    secretKeys: c.SECRETS_ENCRYPTION_KEYS ?? [],
    trustProxyHops: c.TRUST_PROXY,
    logLevel: c.LOG_LEVEL,
    docsBaseUrl: c.DOCS_BASE_URL ?? null,
    dashboard:
      c.DASHBOARD_USER !== undefined && c.DASHBOARD_PORT !== 0
        ? { user: c.DASHBOARD_USER, password: c.DASHBOARD_PASSWORD!, host: c.DASHBOARD_HOST, port: c.DASHBOARD_PORT, write: c.DASHBOARD_WRITE }
        : null,
  };
}

/**
 * The production profile (DATABASE_URL set) never stores webhook secrets in clear: a process that reads or writes
 * them (the API, the worker, the CLI's webhooks:reencrypt) refuses to start without SECRETS_ENCRYPTION_KEYS, with one
 * line naming the command that makes a key. The embedded profile keeps its own key in DATA_DIR.
 */
export function requireSecretKeys(config: Pick<AppConfig, 'databaseUrl' | 'secretKeys'>): void {
  if (config.databaseUrl !== null && config.secretKeys.length === 0) {
    throw new ConfigError(
      'SECRETS_ENCRYPTION_KEYS',
      `must be set when DATABASE_URL is set (webhook secrets are never stored in clear): make a key with \`${GENERATE_KEY_COMMAND}\` and give the same value to the API and the workers`,
    );
  }
}

const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA']);
const NOT_HERE = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EINVAL']);

type Listener = { host: string; port: number; hostVar: string; portVar: string };

/**
 * A listener that cannot start is a set-up mistake like a malformed value, so
 * it is reported the same way: a ConfigError naming the variable to fix
 * (HOST or PORT for the API, METRICS_HOST or METRICS_PORT for metrics, DASHBOARD_HOST or DASHBOARD_PORT for the queue dashboard). Null
 * when the error is not one of those listeners failing. `api` is false in a
 * process that serves no API (the worker).
 */
export function listenConfigError(
  error: unknown,
  config: Pick<AppConfig, 'host' | 'port' | 'metrics'> & { dashboard?: AppConfig['dashboard'] },
  api = true,
): ConfigError | null {
  const failure = errnoOf(error);
  if (!failure) return null;
  // An error the API tagged as its metrics' or dashboard's listener's is that listener's, whatever the numbers say.
  const tagged = (error as { listener?: unknown } | null)?.listener;
  const dashboard = api && config.dashboard ? config.dashboard : null;
  const listeners: Listener[] = [
    ...(api && tagged === undefined ? [{ host: config.host, port: config.port, hostVar: 'HOST', portVar: 'PORT' }] : []),
    ...(config.metrics.port !== 0 && tagged !== 'dashboard' ? [{ ...config.metrics, hostVar: 'METRICS_HOST', portVar: 'METRICS_PORT' }] : []),
    ...(dashboard && tagged !== 'metrics' ? [{ host: dashboard.host, port: dashboard.port, hostVar: 'DASHBOARD_HOST', portVar: 'DASHBOARD_PORT' }] : []),
  ];
  // The API listens first, so when both would match, it is the one that failed.
  // Node leaves `port` out of a listen error when it is 0 (any free port).
  const listener =
    failure.syscall === 'getaddrinfo'
      ? listeners.find((l) => l.host === failure.hostname)
      : failure.syscall === 'listen'
        ? listeners.find((l) => l.port === (failure.port ?? 0))
        : undefined;
  if (!listener) return null;
  const { host, port, hostVar, portVar } = listener;
  const code = failure.code!;
  if (UNRESOLVED.has(code)) return new ConfigError(hostVar, `"${host}" cannot be listened on: the name does not resolve to an address (${code})`);
  if (NOT_HERE.has(code)) return new ConfigError(hostVar, `"${host}" cannot be listened on: it is not an address of this machine (${code})`);
  if (code === 'EADDRINUSE') return new ConfigError(portVar, `${port} on ${host} is already in use by another process (${code})`);
  if (code === 'EACCES') return new ConfigError(portVar, `${port} on ${host} needs privileges this process does not have (${code})`);
  return null;
}

/** The system error behind `error`: itself, or the cause a listener wrapped it in. */
function errnoOf(error: unknown): (NodeJS.ErrnoException & { port?: number; hostname?: string }) | null {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++) {
    if (typeof (e as NodeJS.ErrnoException).code === 'string') return e;
  }
  return null;
}
