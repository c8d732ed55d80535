import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnex, mysqlSslOptions } from '@logi/adapters';
import { ConfigError, databaseTlsOf, loadConfig } from '@logi/config';

/** DATABASE_URL's TLS options and DB_POOL_MAX, as the start reads them (issue 36, point 5); the handshakes: knex-database-tls.test.ts. */
describe('DATABASE_URL options and DB_POOL_MAX', () => {
  let dir: string;
  let ca: string;
  let cert: string;
  let key: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'db-config-'));
    [ca, cert, key] = ['ca.pem', 'client.pem', 'client.key'].map((name) => path.join(dir, name)) as [string, string, string];
    for (const file of [ca, cert, key]) await writeFile(file, `not checked here: ${path.basename(file)}\n`);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const primary = (query: string) => `mysql://app:secret@db:3306/logistics${query}`;

  it.each([
    ['', { mode: 'DISABLED', caFile: null, certFile: null, keyFile: null }],
    ['?ssl-mode=required', { mode: 'REQUIRED', caFile: null, certFile: null, keyFile: null }],
    ['?ssl-mode=VERIFY_CA', { mode: 'VERIFY_CA', caFile: null, certFile: null, keyFile: null }],
  ])('when DATABASE_URL ends %j, then its TLS is %j', (query, tls) => {
    expect(databaseTlsOf(primary(query))).toEqual(tls);
    expect(loadConfig({ DATABASE_URL: primary(query), SECRETS_ENCRYPTION_KEYS: undefined }).databaseUrl).toBe(primary(query));
  });

  it('when files are given without ssl-mode, then the mode is VERIFY_IDENTITY, and the driver checks the chain and the host name', () => {
    const url = primary(`?ssl-ca=${ca}&ssl-cert=${cert}&ssl-key=${key}`);
    expect(databaseTlsOf(url)).toEqual({ mode: 'VERIFY_IDENTITY', caFile: ca, certFile: cert, keyFile: key });
    expect(mysqlSslOptions(url)).toEqual({
      ca: Buffer.from('not checked here: ca.pem\n'),
      cert: Buffer.from('not checked here: client.pem\n'),
      key: Buffer.from('not checked here: client.key\n'),
      rejectUnauthorized: true,
      verifyIdentity: true,
    });
    expect(mysqlSslOptions(primary('?ssl-mode=REQUIRED'))).toEqual({ rejectUnauthorized: false, verifyIdentity: false });
    expect(mysqlSslOptions(primary(`?ssl-mode=VERIFY_CA&ssl-ca=${ca}`))).toMatchObject({ rejectUnauthorized: true, verifyIdentity: false });
    expect(mysqlSslOptions(primary(''))).toBeUndefined();
  });

  it.each([
    ['?ssl=true', 'has the option "ssl", which is not known (known: ssl-mode, ssl-ca, ssl-cert, ssl-key)'],
    ['?sslmode=require', 'has the option "sslmode", which is not known (known: ssl-mode, ssl-ca, ssl-cert, ssl-key)'],
    [
      '?ssl-mode=PREFERRED',
      'has "ssl-mode=PREFERRED", which is not one of DISABLED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY (PREFERRED would fall back to plain text without a word: say REQUIRED or DISABLED)',
    ],
    ['?ssl-mode=REQUIRED&ssl-mode=DISABLED', 'gives the option "ssl-mode" more than once'],
    ['?ssl-ca=/nonexistent/ca.pem', 'names "ssl-ca=/nonexistent/ca.pem", which cannot be read'],
    ['?ssl-ca=', 'has an empty "ssl-ca" (a path to a PEM file)'],
  ])('when DATABASE_URL ends %j, then the start stops with a line naming DATABASE_URL, never its password', (query, problem) => {
    const attempt = () => loadConfig({ DATABASE_URL: primary(query) });
    expect(attempt).toThrow(new ConfigError('DATABASE_URL', problem));
    expect(attempt).not.toThrow(/secret/);
  });

  it('when only one of ssl-cert and ssl-key is given, or files beside ssl-mode=DISABLED, then the start stops and says which', () => {
    expect(() => loadConfig({ DATABASE_URL: primary(`?ssl-cert=${cert}`) })).toThrow(
      new ConfigError('DATABASE_URL', 'needs both "ssl-cert" and "ssl-key" (the client certificate and its key), or neither'),
    );
    expect(() => loadConfig({ DATABASE_URL: primary(`?ssl-mode=DISABLED&ssl-ca=${ca}`) })).toThrow(
      new ConfigError('DATABASE_URL', 'has "ssl-mode=DISABLED" with ssl-* files: say which one is meant'),
    );
  });

  it('when a DATABASE_READ_URL entry has an unknown option, then the error names the entry', () => {
    expect(() => loadConfig({ DATABASE_URL: primary(''), DATABASE_READ_URL: `${primary('')},${primary('?ssl=1')}` })).toThrow(
      new ConfigError('DATABASE_READ_URL', 'entry 2 of 2 has the option "ssl", which is not known (known: ssl-mode, ssl-ca, ssl-cert, ssl-key)'),
    );
  });

  it('when DATABASE_URL is not a URL, then the error never echoes it (it may hold a password)', () => {
    const attempt = () => loadConfig({ DATABASE_URL: 'mysql://app:secret@db:port/x' });
    expect(attempt).toThrow(new ConfigError('DATABASE_URL', 'is not a valid URL'));
    expect(attempt).not.toThrow(/secret/);
  });

  it('when DB_POOL_MAX is unset, then it is 10; when set, the pool holds at most that many connections', async () => {
    expect(loadConfig({}).databasePoolMax).toBe(10);
    expect(loadConfig({ DB_POOL_MAX: '3' }).databasePoolMax).toBe(3);
    expect(() => loadConfig({ DB_POOL_MAX: '0' })).toThrow(new ConfigError('DB_POOL_MAX', 'must be a whole number >= 1 (got "0")'));
    const knex = createKnex({ databaseUrl: 'mysql://root@127.0.0.1:3306/mysql', dataDir: dir, poolMax: 3 });
    try {
      await Promise.all(Array.from({ length: 6 }, () => knex.raw('SELECT SLEEP(0.05)')));
      const pool = (knex.client as { pool: { max: number; numUsed(): number; numFree(): number } }).pool;
      expect(pool.max).toBe(3);
      expect(pool.numUsed() + pool.numFree()).toBe(3);
    } finally {
      await knex.destroy();
    }
  });
});
