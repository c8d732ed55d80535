import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createKnex, lineKnexLogger, type KnexLogger } from '@logi/adapters';
import { freePort } from '../support/free-port.js';
import { ensureMariadb, MARIADB_ROOT_URL } from './knex-test-databases.js';

describe('createKnex', () => {
  let root: string;
  const opened: Knex[] = [];

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'logi-knex-'));
  });

  afterAll(async () => {
    await Promise.all(opened.map((k) => k.destroy()));
    await rm(root, { recursive: true, force: true });
  });

  it('when no DATABASE_URL is set, then a WAL SQLite file is made in a new DATA_DIR, with foreign keys and a busy timeout', async () => {
    const dataDir = path.join(root, 'nested', 'data');
    const knex = createKnex({ databaseUrl: null, dataDir });
    opened.push(knex);
    expect(await knex.raw('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
    expect(await knex.raw('PRAGMA foreign_keys')).toEqual([{ foreign_keys: 1 }]);
    expect(await knex.raw('PRAGMA busy_timeout')).toEqual([{ timeout: 5000 }]);
    expect(existsSync(path.join(dataDir, 'app.sqlite'))).toBe(true);
  });

  it('when SQLite folds and sorts text, then Unicode case is folded and NULL stays NULL', async () => {
    const knex = createKnex({ databaseUrl: null, dataDir: path.join(root, 'fold') });
    opened.push(knex);
    expect(await knex.raw("SELECT ufold('ŁÓDŹ İstanbul ÄRZTE') AS f, ufold(NULL) AS n")).toEqual([{ f: 'łodz istanbul arzte', n: null }]);
    expect(await knex.raw("SELECT instr(ufold('Łódź Cargo'), ufold('ŁÓDŹ')) AS at")).toEqual([{ at: 1 }]);
    // '/' before '%', case ignored, trailing spaces ignored, as in utf8mb4_unicode_ci.
    expect(
      await knex.raw(
        "SELECT usortkey('FV/1') < usortkey('FV%1') AS a, usortkey('abc') = usortkey('ABC  ') AS b, usortkey('lz') < usortkey('ła') AS c, usortkey('ła') < usortkey('ma') AS d",
      ),
    ).toEqual([{ a: 1, b: 1, c: 1, d: 1 }]);
  });

  it('when MariaDB does not answer, then a query fails within seconds instead of hanging, and the logger gets one line without a stack', async () => {
    // A port that accepts nothing.
    const port = await freePort();
    const entries: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
    const logger: KnexLogger = {
      warn: (fields, message) => entries.push({ level: 'warn', fields, message }),
      error: (fields, message) => entries.push({ level: 'error', fields, message }),
    };
    const knex = createKnex({ databaseUrl: `mysql://root@127.0.0.1:${port}/none`, dataDir: root, logger });
    opened.push(knex);
    const started = Date.now();
    await expect(knex.raw('SELECT 1')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(11_000);
    // knex's own default is console.log with the whole stack, which reads like a failing test.
    expect(entries).toEqual([
      { level: 'warn', fields: { reason: `connect ECONNREFUSED 127.0.0.1:${port}` }, message: 'database connection could not be acquired' },
    ]);
  });

  it('when a process has no logger of its own, then knex warnings are plain lines', () => {
    const lines: string[] = [];
    const logger = lineKnexLogger((line) => lines.push(line));
    logger.warn({ reason: 'connect ETIMEDOUT' }, 'database connection could not be acquired');
    expect(lines).toEqual(['database connection could not be acquired: connect ETIMEDOUT']);
  });

  it('when MariaDB answers, then the connection compares text as utf8mb4_unicode_ci and waits for locks 10 s at most', async () => {
    await ensureMariadb();
    const knex = createKnex({ databaseUrl: MARIADB_ROOT_URL, dataDir: root });
    opened.push(knex);
    const [rows] = (await knex.raw(
      "SELECT @@collation_connection AS c, 'ŁÓDŹ' = 'łódź' AS eq, @@SESSION.lock_wait_timeout AS mdl, @@SESSION.innodb_lock_wait_timeout AS row_lock",
    )) as unknown as [Array<{ c: string; eq: number; mdl: number; row_lock: number }>];
    expect(rows).toEqual([{ c: 'utf8mb4_unicode_ci', eq: 1, mdl: 10, row_lock: 10 }]);
  });

  it('when DB_QUERY_TIMEOUT_MS is set, then a statement with no answer fails after it, inside a transaction too, and the pool goes on', async () => {
    await ensureMariadb();
    const knex = createKnex({ databaseUrl: MARIADB_ROOT_URL, dataDir: root, queryTimeoutMs: 300 });
    opened.push(knex);
    await expect(knex.raw('SELECT SLEEP(5)')).rejects.toMatchObject({ code: 'PROTOCOL_SEQUENCE_TIMEOUT' });
    // The timed-out connection is destroyed, so the transaction ends with the ROLLBACK's error on it: mysql2 marks it
    // fatal, which the adapters read as the database being unavailable (503).
    const inTransaction = await knex
      .transaction((trx) => trx.raw('SELECT SLEEP(5)'))
      .then(
        () => null,
        (error: unknown) => error as { code?: string; fatal?: boolean },
      );
    expect(inTransaction?.code === 'PROTOCOL_SEQUENCE_TIMEOUT' || inTransaction?.fatal === true).toBe(true);
    const [rows] = (await knex.raw('SELECT 1 AS one')) as unknown as [Array<{ one: number }>];
    expect(rows).toEqual([{ one: 1 }]);
    // Another knex in the same process without the setting is not bounded by it.
    const unbounded = createKnex({ databaseUrl: MARIADB_ROOT_URL, dataDir: root });
    opened.push(unbounded);
    const [slept] = (await unbounded.transaction((trx) => trx.raw('SELECT SLEEP(0.5) AS s'))) as unknown as [Array<{ s: number }>];
    expect(slept).toEqual([{ s: 0 }]);
  });
});
