import { Counter, Gauge, type Registry } from 'prom-client';
import { EXPORT_FAILURES, type ExportFailure, type ExportRunObserver } from '@logi/domain';

/**
 * The export runner's metrics, on the registry of the process that makes exports (a worker, or the API in the
 * embedded profile):
 * - `logistics_exports_running`: exports this process is making now (0 or 1: a runner makes one at a time);
 * - `logistics_exports_finished_total{outcome}`: exports that ended here, `succeeded` or `failed`;
 * - `logistics_export_bytes_total`: bytes of the archives stored by the exports that succeeded here;
 * - `logistics_export_attempt_failures_total{failure,final}`: attempts that failed, by the fixed failure kind the client
 *   is told (`storage`, `rendering`, `database`, `cancelled`), `final="false"` when another attempt follows.
 */
export function exportRunMetrics(registry: Registry): ExportRunObserver {
  const running = new Gauge({
    name: 'logistics_exports_running',
    help: 'Exports this process is making now.',
    registers: [registry],
  });
  const finished = new Counter({
    name: 'logistics_exports_finished_total',
    help: 'Exports that ended in this process, by outcome (succeeded, failed).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const bytes = new Counter({
    name: 'logistics_export_bytes_total',
    help: 'Bytes of the archives stored by the exports that succeeded in this process.',
    registers: [registry],
  });
  const failures = new Counter({
    name: 'logistics_export_attempt_failures_total',
    help: 'Export attempts that failed, by failure (storage, rendering, database, cancelled) and whether it was the last (final).',
    labelNames: ['failure', 'final'] as const,
    registers: [registry],
  });
  // Every series exists from the start, so a rate over them is 0 rather than absent.
  running.set(0);
  for (const outcome of ['succeeded', 'failed']) finished.inc({ outcome }, 0);
  for (const failure of Object.keys(EXPORT_FAILURES) as ExportFailure[]) for (const final of ['true', 'false']) failures.inc({ failure, final }, 0);
  return {
    started: () => running.inc(),
    ended: () => running.dec(),
    succeeded: (size) => {
      finished.inc({ outcome: 'succeeded' });
      bytes.inc(size);
    },
    failed: (failure, final) => {
      failures.inc({ failure, final: String(final) });
      if (final) finished.inc({ outcome: 'failed' });
    },
  };
}
