import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { createKnex } from '../create-knex.js';
import { ReadReplicas } from './read-replicas.js';

/**
 * The read replicas of DATABASE_READ_URL beside `primary`, checking from now
 * on; null when none is configured (every read goes to the primary, as
 * before). Each replica's pool has the primary's statement, connect and
 * acquire timeouts.
 */
export function createReadReplicas(
  config: { databaseReadUrls: readonly string[]; dbReplicaMaxLagSeconds: number; dataDir: string; databaseQueryTimeoutMs: number; databasePoolMax: number },
  primary: Knex,
  logger: Logger,
): ReadReplicas | null {
  if (config.databaseReadUrls.length === 0) return null;
  const replicas = config.databaseReadUrls.map((url) => ({
    url,
    knex: createKnex({ databaseUrl: url, dataDir: config.dataDir, queryTimeoutMs: config.databaseQueryTimeoutMs, poolMax: config.databasePoolMax, logger }),
  }));
  return new ReadReplicas(primary, replicas, { maxLagSeconds: config.dbReplicaMaxLagSeconds, logger }).start();
}
