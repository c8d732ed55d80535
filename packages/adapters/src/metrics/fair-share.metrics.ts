import { Histogram, type Registry } from 'prom-client';
import type { JobFirstStart } from '../bullmq/bullmq-job.worker.js';

/** A request's render waits milliseconds to seconds; an export's bulk renders may wait minutes behind requests. */
const WAIT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

/**
 * `logistics_fair_share_wait_seconds{queue,kind,directory_class}`: how long each job waited from its add to its first
 * start in this worker, by its place in the queue's fair shares (docs/contribute/decisions/0036-fair-render-scheduling.md):
 * `kind` `interactive` (a request waits for it) or `bulk` (an export's), `directory_class` `idle` (its directory had no
 * job of that kind waiting) or `backlogged` (queued behind its own directory's jobs); `none` for a job added without a
 * fair share. Feed to BullmqJobWorker's `onFirstStart`.
 */
export function fairShareWaitMetrics(registry: Registry): (start: JobFirstStart) => void {
  const wait = new Histogram({
    name: 'logistics_fair_share_wait_seconds',
    help: 'Time from a job being added to its first start, by queue, kind (interactive, bulk) and directory class (idle, backlogged, none).',
    labelNames: ['queue', 'kind', 'directory_class'] as const,
    buckets: WAIT_BUCKETS,
    registers: [registry],
  });
  return (start) =>
    wait.observe({ queue: start.queue, kind: start.fair?.kind ?? 'none', directory_class: start.fair?.directoryClass ?? 'none' }, start.waitedMs / 1000);
}
