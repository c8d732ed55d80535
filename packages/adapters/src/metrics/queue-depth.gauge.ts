import { Gauge, type Registry } from 'prom-client';

/** Whatever can count the jobs of each queue by state (BullmqQueueInspector). */
export interface QueueDepthSource {
  jobCounts(timeoutMs: number): Promise<Record<string, Record<string, number>>>;
  /** Per queue, when the oldest waiting job a request waits for was added (Unix ms), null when none waits. */
  oldestWaiting?(timeoutMs: number): Promise<Record<string, number | null>>;
}

export interface QueueDepthGaugeOptions {
  /** A scrape never waits longer than this for Redis (default 1000 ms). */
  timeoutMs?: number;
  /** Called when the counts could not be read; the scrape goes on without them. */
  onError?: (error: unknown) => void;
}

/**
 * `logistics_queue_jobs{queue,state}` (and `logistics_queue_oldest_job_age_seconds{queue}` when the source can tell), read from Redis at scrape time rather
 * than kept up to date by events, so it is right whichever process added or
 * took the jobs. When Redis does not answer in time the series are left out
 * of that scrape (absent, not stale), and the rest of /metrics is served.
 */
export function registerQueueDepthGauge(registry: Registry, source: QueueDepthSource, options: QueueDepthGaugeOptions = {}): Gauge<'queue' | 'state'> {
  const timeoutMs = options.timeoutMs ?? 1_000;
  const gauge: Gauge<'queue' | 'state'> = new Gauge({
    name: 'logistics_queue_jobs',
    help: 'Jobs in each queue by state (waiting, active, delayed, failed), read from Redis at scrape time.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      gauge.reset();
      try {
        const counts = await source.jobCounts(timeoutMs);
        for (const [queue, byState] of Object.entries(counts)) {
          for (const [state, value] of Object.entries(byState)) gauge.set({ queue, state }, value);
        }
      } catch (error) {
        options.onError?.(error);
      }
    },
  });
  const oldestWaiting = source.oldestWaiting?.bind(source);
  if (oldestWaiting) {
    const age: Gauge<'queue'> = new Gauge({
      name: 'logistics_queue_oldest_job_age_seconds',
      help: "Age of the oldest waiting job a request waits for, per queue (0 when none waits; exports' bulk renders left out), read from Redis at scrape time.",
      labelNames: ['queue'] as const,
      registers: [registry],
      async collect() {
        age.reset();
        try {
          const now = Date.now();
          for (const [queue, addedAt] of Object.entries(await oldestWaiting(timeoutMs)))
            age.set({ queue }, addedAt === null ? 0 : Math.max(0, now - addedAt) / 1000);
        } catch (error) {
          options.onError?.(error);
        }
      },
    });
  }
  return gauge;
}
