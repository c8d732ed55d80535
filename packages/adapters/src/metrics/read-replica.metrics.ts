import { Counter, Gauge, type Registry } from 'prom-client';
import type { ReadReplicas } from '../knex/replicas/read-replicas.js';

/**
 * The read replicas' metrics, read from ReadReplicas when Prometheus scrapes:
 * - `logistics_db_replica_healthy{replica}`: 1 while the replica serves reads, 0 while it is skipped (or not yet checked);
 * - `logistics_db_replica_lag_seconds{replica}`: its Seconds_Behind_Master at the last check (absent when it gave none);
 * - `logistics_db_reads_total{database}`: reads by where they ran (`primary`, `replica_1`, ...);
 * - `logistics_db_read_fallbacks_total{reason}`: reads that ran on the primary although replicas are configured,
 *   `no_healthy_replica` (none fit) or `replica_failed` (run again after a replica lost the connection).
 */
export function registerReadReplicaMetrics(registry: Registry, replicas: ReadReplicas): void {
  const healthy: Gauge<'replica'> = new Gauge({
    name: 'logistics_db_replica_healthy',
    help: 'Whether each read replica serves reads (1) or is skipped as lagging, stopped or unreachable (0).',
    labelNames: ['replica'] as const,
    registers: [registry],
    collect() {
      for (const status of replicas.status()) healthy.set({ replica: status.name }, status.state === 'ok' ? 1 : 0);
    },
  });
  const lag: Gauge<'replica'> = new Gauge({
    name: 'logistics_db_replica_lag_seconds',
    help: 'Seconds_Behind_Master of each read replica at its last check; absent when it reported none (stopped, unreachable).',
    labelNames: ['replica'] as const,
    registers: [registry],
    collect() {
      lag.reset();
      for (const status of replicas.status()) if (status.lagSeconds !== null) lag.set({ replica: status.name }, status.lagSeconds);
    },
  });
  const reads: Counter<'database'> = new Counter({
    name: 'logistics_db_reads_total',
    help: 'Reads of the read-only paths (lists, lookups, the event feed, PDF data) by the database they ran on.',
    labelNames: ['database'] as const,
    registers: [registry],
    collect() {
      reads.reset();
      for (const [database, n] of replicas.counts().reads) reads.inc({ database }, n);
    },
  });
  const fallbacks: Counter<'reason'> = new Counter({
    name: 'logistics_db_read_fallbacks_total',
    help: 'Reads that ran on the primary although read replicas are configured, by reason (no_healthy_replica, replica_failed).',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      fallbacks.reset();
      for (const [reason, n] of replicas.counts().fallbacks) fallbacks.inc({ reason }, n);
    },
  });
}
