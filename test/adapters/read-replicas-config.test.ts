import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createKnex, judgeReplicaStatus, ReadReplicas } from '@logi/adapters';
import { ConfigError, loadConfig } from '@logi/config';
import { freePort } from '../support/free-port.js';

const PRIMARY = 'mysql://root@127.0.0.1:3306/mysql';

describe('DATABASE_READ_URL and DB_REPLICA_MAX_LAG_SECONDS', () => {
  it('when neither is set, then there are no replicas and the lag limit is 5 s', () => {
    expect(loadConfig({})).toMatchObject({ databaseReadUrls: [], dbReplicaMaxLagSeconds: 5 });
  });

  it('when several URLs are given, then each is kept in order, spaces around commas dropped', () => {
    const config = loadConfig({
      DATABASE_URL: 'mysql://app:pw@db-primary:3306/logistics',
      DATABASE_READ_URL: 'mysql://app:pw@db-replica-1:3306/logistics , mariadb://app:pw@db-replica-2/logistics',
      DB_REPLICA_MAX_LAG_SECONDS: '30',
    });
    expect(config.databaseReadUrls).toEqual(['mysql://app:pw@db-replica-1:3306/logistics', 'mariadb://app:pw@db-replica-2/logistics']);
    expect(config.dbReplicaMaxLagSeconds).toBe(30);
  });

  it('when DB_REPLICA_MAX_LAG_SECONDS is 0, then it is accepted (only a replica with no lag serves)', () => {
    expect(loadConfig({ DB_REPLICA_MAX_LAG_SECONDS: '0' }).dbReplicaMaxLagSeconds).toBe(0);
  });

  it('when DATABASE_READ_URL is set without DATABASE_URL, then the error names it and says why', () => {
    expect(() => loadConfig({ DATABASE_READ_URL: 'mysql://app@replica/db' })).toThrow(
      new ConfigError(
        'DATABASE_READ_URL',
        'needs DATABASE_URL: read replicas serve reads of a MariaDB/MySQL primary, and without DATABASE_URL the database is the embedded SQLite file',
      ),
    );
  });

  it.each([
    ['mysql://app@a/db,', 'entry 2 of 2 is empty (a comma-separated list of URLs)'],
    ['mysql://app:secret@a/db,not a url', 'entry 2 of 2 is not a valid URL'],
    ['postgres://app:secret@a/db', 'entry 1 of 1 must use one of the schemes mysql, mariadb (got "postgres:")'],
  ])('when DATABASE_READ_URL is %j, then the error names the entry and never echoes a password', (value, problem) => {
    const attempt = () => loadConfig({ DATABASE_URL: 'mysql://app@primary/db', DATABASE_READ_URL: value });
    expect(attempt).toThrow(new ConfigError('DATABASE_READ_URL', problem));
    expect(attempt).not.toThrow(/secret/);
  });

  it.each(['-1', '1.5', 'five'])('when DB_REPLICA_MAX_LAG_SECONDS is %j, then the error names it', (value) => {
    expect(() => loadConfig({ DB_REPLICA_MAX_LAG_SECONDS: value })).toThrow(
      new ConfigError('DB_REPLICA_MAX_LAG_SECONDS', `must be a whole number >= 0 (got "${value}")`),
    );
  });
});

describe('judging SHOW REPLICA STATUS', () => {
  const row = (io: string, sql: string, behind: number | null) => ({ Slave_IO_Running: io, Slave_SQL_Running: sql, Seconds_Behind_Master: behind });

  it('when both threads run within the limit, then the replica is ok with its lag', () => {
    expect(judgeReplicaStatus([row('Yes', 'Yes', 5)], 5)).toEqual({ state: 'ok', lagSeconds: 5, reason: null });
  });

  it('when it is further behind than the limit, then it is lagging', () => {
    expect(judgeReplicaStatus([row('Yes', 'Yes', 6)], 5)).toMatchObject({ state: 'lagging', lagSeconds: 6 });
  });

  it('when a thread is stopped or the lag is NULL, then it is stopped', () => {
    expect(judgeReplicaStatus([row('Yes', 'No', null)], 5)).toMatchObject({ state: 'stopped', lagSeconds: null });
    expect(judgeReplicaStatus([row('Connecting', 'Yes', null)], 5)).toMatchObject({ state: 'stopped' });
    expect(judgeReplicaStatus([row('Yes', 'Yes', null)], 5)).toMatchObject({ state: 'stopped' });
  });

  it('when the server is no replica (no rows), then it is stopped', () => {
    expect(judgeReplicaStatus([], 5)).toMatchObject({ state: 'stopped', reason: 'not a replica: SHOW REPLICA STATUS is empty' });
  });

  it("when MySQL 8's column names are used, then they are read the same", () => {
    expect(judgeReplicaStatus([{ Replica_IO_Running: 'Yes', Replica_SQL_Running: 'Yes', Seconds_Behind_Source: 2 }], 5)).toMatchObject({
      state: 'ok',
      lagSeconds: 2,
    });
  });

  it('when there are several sources, then the worst decides', () => {
    expect(judgeReplicaStatus([row('Yes', 'Yes', 1), row('Yes', 'Yes', 9)], 5)).toMatchObject({ state: 'lagging', lagSeconds: 9 });
  });
});

describe('ReadReplicas against servers that cannot serve reads', () => {
  it('when one replica is no replica and another refuses connections, then both are skipped, reads run on the primary and are counted as fallbacks', async () => {
    const primary = createKnex({ databaseUrl: PRIMARY, dataDir: '/tmp', queryTimeoutMs: 5_000 });
    // The machine's MariaDB is a primary: SHOW REPLICA STATUS is empty. Nothing listens on a free port.
    const notAReplica = createKnex({ databaseUrl: PRIMARY, dataDir: '/tmp', queryTimeoutMs: 5_000 });
    let checks = 0;
    notAReplica.on('query', (query: { sql: string }) => {
      if (/^SHOW (REPLICA|SLAVE) STATUS$/.test(query.sql)) checks += 1;
    });
    const refusedUrl = `mysql://root@127.0.0.1:${await freePort()}/mysql`;
    const refused = createKnex({ databaseUrl: refusedUrl, dataDir: '/tmp', queryTimeoutMs: 5_000, logger: { warn: () => undefined, error: () => undefined } });
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const replicas = new ReadReplicas(
      primary,
      [
        { knex: notAReplica, url: PRIMARY },
        { knex: refused, url: refusedUrl },
      ],
      { maxLagSeconds: 5, logger, checkEveryMs: 100 },
    ).start();
    try {
      await expect.poll(() => replicas.status().map((s) => s.state), { timeout: 10_000, interval: 50 }).toEqual(['stopped', 'unreachable']);
      const ran = await replicas.read(async (target) => {
        await target.knex.raw('select 1');
        return target.name;
      });
      expect(ran).toBe('primary');
      expect(replicas.counts().fallbacks.get('no_healthy_replica')).toBe(1);
      // Many checks, one line per replica: a state is logged when it changes, not on every check.
      await expect
        .poll(() => lines.filter((l) => l.msg === 'read replica skipped: reads go elsewhere until it is fit again').length, { timeout: 5_000 })
        .toBe(2);
      // Five more checks of the first replica (its knex's statements counted) change nothing in the log.
      const seen = checks;
      await expect.poll(() => checks - seen, { timeout: 10_000, interval: 50 }).toBeGreaterThanOrEqual(5);
      expect(lines.filter((l) => String(l.msg).startsWith('read replica')).map((l) => [l.replica, l.state])).toEqual(
        expect.arrayContaining([
          ['replica_1', 'stopped'],
          ['replica_2', 'unreachable'],
        ]),
      );
      expect(lines.filter((l) => String(l.msg).startsWith('read replica'))).toHaveLength(2);
    } finally {
      await replicas.close();
      await primary.destroy();
    }
  });
});
