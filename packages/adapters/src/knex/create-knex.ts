import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type BetterSqlite3 from 'better-sqlite3';
import { databaseTlsOf } from '@logi/config';
import { foldText, textSortKey } from './unicode-text.js';
import { knexLogOption, lineKnexLogger, type KnexLogger, type KnexLogOption } from './knex-log.js';
import { keepBoundValuesOutOfErrors } from './db-errors.js';

export interface KnexConfig {
  /** mysql:// or mariadb:// URL; null means the embedded SQLite file. */
  databaseUrl: string | null;
  /** Holds app.sqlite in the embedded profile. */
  dataDir: string;
  /**
   * MariaDB: ms a statement may take before it fails and its connection is
   * destroyed (DB_QUERY_TIMEOUT_MS in the API and the worker). Unset means no
   * limit, for the CLI's migrations and reindex, which take minutes at scale.
   */
  queryTimeoutMs?: number | null;
  /**
   * Takes knex's own warnings (a failed connection attempt: one entry, no
   * stack). The API and the worker pass their logger; without one they are
   * plain lines on stderr.
   */
  logger?: KnexLogger;
  /** MariaDB: the most connections this pool holds (DB_POOL_MAX); 10 unless given. */
  poolMax?: number;
}

/** A dead database must fail a request quickly (503), not hang it. */
const CONNECT_TIMEOUT_MS = 5_000;
const ACQUIRE_TIMEOUT_MS = 10_000;
const DEFAULT_POOL_MAX = 10;
/**
 * How long a MariaDB statement waits for a row or table (metadata) lock: the
 * server defaults are 50 s and a day, so a stuck lock would hang a request or
 * a migration instead of failing it.
 */
const MYSQL_LOCK_WAIT_SECONDS = 10;
/** Several processes may share one SQLite file; a writer waits this long for another's lock. */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/**
 * The database of this process: MariaDB/MySQL when `databaseUrl` is set, else
 * a SQLite file in `dataDir` (WAL, so API, worker and CLI can share it).
 */
export function createKnex(config: KnexConfig): Knex {
  const log = knexLogOption(config.logger ?? lineKnexLogger((line) => process.stderr.write(`${line}\n`)));
  const knex = config.databaseUrl ? createMysqlKnex(config.databaseUrl, log, config.poolMax ?? DEFAULT_POOL_MAX) : createSqliteKnex(config.dataDir, log);
  // Errors are logged: they carry the SQL text, never the values bound to it (a webhook secret, say).
  keepBoundValuesOutOfErrors(knex);
  if (config.databaseUrl && config.queryTimeoutMs) boundStatements(knex, config.queryTimeoutMs);
  return knex;
}

/** The part of a mysql2 connection and of knex's client that boundStatements reaches into. */
interface Mysql2Connection {
  destroy(): void;
}
interface KnexQueryObject {
  options?: Record<string, unknown>;
}
interface KnexMysqlClient {
  config: Record<string, unknown>;
  _query(connection: Mysql2Connection, obj: KnexQueryObject): Promise<unknown>;
}

/** Where boundStatements keeps the bound in knex's config: a transaction's client shares the config, not the object. */
const STATEMENT_TIMEOUT = 'logiStatementTimeoutMs';
const PATCHED = Symbol.for('logi.boundStatements');

/**
 * Every statement carries mysql2's timeout, and a timed-out connection is destroyed: its unanswered command would hold up
 * every later statement given it (docs/contribute/decisions/0034-bounded-sql-statements.md). knex makes each
 * transaction's client from the client class's prototype and shares only the config, so the bound is read from the
 * config by a wrapper on the prototype: statements inside transactions are bounded too. A knex without the setting
 * (SQLite's class is another) is not touched.
 */
function boundStatements(knex: Knex, timeoutMs: number): void {
  const client = knex.client as unknown as KnexMysqlClient;
  client.config[STATEMENT_TIMEOUT] = timeoutMs;
  const prototype = Object.getPrototypeOf(client) as KnexMysqlClient & { [PATCHED]?: true };
  if (Object.prototype.hasOwnProperty.call(prototype, PATCHED)) return;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the client it belongs to, below
  const query = prototype._query;
  prototype[PATCHED] = true;
  prototype._query = function (this: KnexMysqlClient, connection, obj) {
    const bound = this.config?.[STATEMENT_TIMEOUT];
    if (typeof bound !== 'number') return query.call(this, connection, obj);
    if (obj && typeof obj === 'object') obj.options = { timeout: bound, ...obj.options };
    return query.call(this, connection, obj).catch((error: unknown) => {
      if ((error as { code?: unknown } | null)?.code === 'PROTOCOL_SEQUENCE_TIMEOUT') connection.destroy();
      throw error;
    });
  };
}

/**
 * mysql2's TLS options for the URL's ssl-* options (@logi/config database-tls.ts); undefined: plain TCP. mysql2 checks
 * the certificate's chain with `rejectUnauthorized` and its host name only with `verifyIdentity`.
 */
export function mysqlSslOptions(databaseUrl: string): Record<string, unknown> | undefined {
  const tls = databaseTlsOf(databaseUrl);
  if (tls.mode === 'DISABLED') return undefined;
  return {
    ...(tls.caFile === null ? {} : { ca: readFileSync(tls.caFile) }),
    ...(tls.certFile === null ? {} : { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile!) }),
    rejectUnauthorized: tls.mode !== 'REQUIRED',
    verifyIdentity: tls.mode === 'VERIFY_IDENTITY',
  };
}

function createMysqlKnex(databaseUrl: string, log: KnexLogOption, poolMax: number): Knex {
  const url = new URL(databaseUrl);
  const ssl = mysqlSslOptions(databaseUrl);
  return knexFactory({
    client: 'mysql2',
    log,
    compileSqlOnError: false,
    connection: {
      host: url.hostname,
      port: url.port ? Number(url.port) : 3306,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: decodeURIComponent(url.pathname.replace(/^\//, '')),
      // knex also uses this as the default charset of tables it creates (its migration table).
      charset: 'utf8mb4',
      connectTimeout: CONNECT_TIMEOUT_MS,
      timezone: 'Z',
      ...(ssl ? { ssl } : {}),
    },
    pool: {
      min: 0,
      max: poolMax,
      // Literals then compare like the columns (utf8mb4_unicode_ci), whatever the server's default is;
      // lock waits are bounded.
      afterCreate(connection: { query(sql: string, cb: (error: Error | null) => void): void }, done: (error: Error | null, connection: unknown) => void) {
        connection.query(
          `SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci, SESSION lock_wait_timeout = ${MYSQL_LOCK_WAIT_SECONDS}, SESSION innodb_lock_wait_timeout = ${MYSQL_LOCK_WAIT_SECONDS}`,
          (error) => done(error, connection),
        );
      },
    },
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
  });
}

function createSqliteKnex(dataDir: string, log: KnexLogOption): Knex {
  mkdirSync(dataDir, { recursive: true });
  return knexFactory({
    client: 'better-sqlite3',
    log,
    compileSqlOnError: false,
    connection: { filename: path.join(dataDir, 'app.sqlite') },
    useNullAsDefault: true,
    pool: {
      afterCreate(db: BetterSqlite3.Database, done: (error: Error | null, db: unknown) => void) {
        try {
          db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
          db.pragma('journal_mode = WAL');
          db.pragma('synchronous = NORMAL');
          db.pragma('foreign_keys = ON');
          registerTextFunctions(db);
          done(null, db);
        } catch (error) {
          done(error as Error, db);
        }
      },
    },
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
  });
}

/** SQLite's lower() and LIKE fold only ASCII; these give Unicode-aware matching and MariaDB-like ordering. */
function registerTextFunctions(db: BetterSqlite3.Database): void {
  const options = { deterministic: true, varargs: false } as const;
  db.function('ufold', options, (value: unknown) => (value == null ? null : foldText(String(value))));
  db.function('usortkey', options, (value: unknown) => (value == null ? null : textSortKey(String(value))));
}
