import type { Knex } from 'knex';

/**
 * What a read replica is fit for: `ok` serves reads; `lagging` (behind by
 * more than the limit), `stopped` (replication not running, or the server
 * is no replica) and `unreachable` (no answer within the check's bound, or
 * an error) are skipped; `unknown` until its first check.
 */
export type ReplicaState = 'unknown' | 'ok' | 'lagging' | 'stopped' | 'unreachable';

export interface ReplicaCheck {
  state: Exclude<ReplicaState, 'unknown'>;
  /** Seconds_Behind_Master as the replica reported it; null when it did not (stopped, unreachable). */
  lagSeconds: number | null;
  /** Why a replica is not `ok`, for the log (never sent to clients). */
  reason: string | null;
}

/** A row of SHOW REPLICA STATUS: MariaDB names its columns Slave_* and *_Master, MySQL 8 Replica_* and *_Source. */
type StatusRow = Record<string, unknown>;

const column = (row: StatusRow, ...names: string[]): unknown => names.map((name) => row[name]).find((value) => value !== undefined);

/**
 * Judges one replica from its SHOW REPLICA STATUS rows (one per source; the
 * worst decides). Both threads must run: with the I/O thread down the
 * replica no longer hears of new writes, and Seconds_Behind_Master is then
 * NULL on MariaDB anyway.
 */
export function judgeReplicaStatus(rows: readonly StatusRow[], maxLagSeconds: number): ReplicaCheck {
  if (rows.length === 0) return { state: 'stopped', lagSeconds: null, reason: 'not a replica: SHOW REPLICA STATUS is empty' };
  let lagSeconds = 0;
  for (const row of rows) {
    const io = String(column(row, 'Slave_IO_Running', 'Replica_IO_Running') ?? '');
    const sql = String(column(row, 'Slave_SQL_Running', 'Replica_SQL_Running') ?? '');
    const behind = column(row, 'Seconds_Behind_Master', 'Seconds_Behind_Source');
    const lag = behind === null || behind === undefined || behind === '' ? null : Number(behind);
    if (io !== 'Yes' || sql !== 'Yes' || lag === null || !Number.isFinite(lag)) {
      const error = String(column(row, 'Last_SQL_Error', 'Last_IO_Error') ?? '').trim();
      return {
        state: 'stopped',
        lagSeconds: null,
        reason: `replication not running (I/O thread ${io || '?'}, SQL thread ${sql || '?'}${error ? `: ${error}` : ''})`,
      };
    }
    lagSeconds = Math.max(lagSeconds, lag);
  }
  return lagSeconds > maxLagSeconds
    ? { state: 'lagging', lagSeconds, reason: `${lagSeconds} s behind the primary (limit ${maxLagSeconds} s)` }
    : { state: 'ok', lagSeconds, reason: null };
}

/** MySQL before 8.0.22 knows only SHOW SLAVE STATUS; MariaDB has both since 10.5 (and 8.4 only the new one). */
const STATEMENTS = ['SHOW REPLICA STATUS', 'SHOW SLAVE STATUS'] as const;

/**
 * Reads the replica's status, each statement bounded by `timeoutMs` (mysql2's
 * statement timeout: a hung server fails the check, and create-knex drops that
 * connection). Needs the SLAVE MONITOR privilege on MariaDB 10.5.9 and later
 * (REPLICATION CLIENT on MySQL and older MariaDB).
 */
export async function readReplicaStatus(knex: Knex, timeoutMs: number, statement: { index: number }): Promise<StatusRow[]> {
  for (;;) {
    try {
      const result = (await knex.raw(STATEMENTS[statement.index]!).options({ timeout: timeoutMs })) as [StatusRow[], unknown];
      return result[0];
    } catch (error) {
      // A server that does not know the newer statement is asked the older one from then on.
      if ((error as { code?: unknown }).code === 'ER_PARSE_ERROR' && statement.index + 1 < STATEMENTS.length) {
        statement.index += 1;
        continue;
      }
      throw error;
    }
  }
}
