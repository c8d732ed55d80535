import { Gauge, type Registry } from 'prom-client';
import { withTimeout } from '@logi/domain';
import type { ReadinessChecker } from '../health/readiness.checker.js';

/**
 * `logistics_dependency_up{dependency}`: 1 while a dependency answered the readiness probe, 0 while it did not, for each
 * check the probe makes (`database`, `storage`, `job_queue`, and `redis` or `pdf_renderer`: a fixed set). A scrape asks
 * the readiness checker (which shares a probe under way and answers from one under 1 s old) and waits at most
 * `waitMs`; a probe slower than that (a dependency timing out) answers the next scrape, and this one reports the last
 * finished probe, or nothing before the first.
 */
export function registerDependencyUpGauge(registry: Registry, readiness: ReadinessChecker, waitMs = 1_000): void {
  const gauge: Gauge<'dependency'> = new Gauge({
    name: 'logistics_dependency_up',
    help: "Whether each dependency (database, storage, job_queue, redis, pdf_renderer) answered this process's latest readiness probe (1) or not (0).",
    labelNames: ['dependency'] as const,
    registers: [registry],
    async collect() {
      // The probe's own failures are its outcomes; a slow one is read by a later scrape.
      await withTimeout(() => readiness.check().catch(() => undefined), waitMs, { onTimeout: () => undefined });
      gauge.reset();
      for (const [dependency, outcome] of Object.entries(readiness.latestChecks() ?? {})) gauge.set({ dependency }, outcome === 'ok' ? 1 : 0);
    },
  });
}
