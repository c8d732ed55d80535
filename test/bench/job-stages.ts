import { parseSamples, scrapeMetrics } from '../support/prometheus.js';

/** What a job process's histograms hold at one moment: count and sum (s) per stage of one histogram, and `wait` of one queue. */
export type StageCounters = Map<string, number>;

/**
 * Scrapes a job process (a worker, or the API that runs its jobs in-process) for one stage histogram
 * (`logistics_upload_store_stage_seconds`, `logistics_pdf_job_stage_seconds`: every label set summed per stage) and
 * the fair-share wait of one queue (from a job's add to its start; absent where jobs run in the API).
 */
export async function stageCounters(port: number, histogram: string, queue: string): Promise<StageCounters> {
  const totals: StageCounters = new Map();
  const add = (key: string, value: number) => totals.set(key, (totals.get(key) ?? 0) + value);
  const part = (name: string) => name.slice(name.lastIndexOf('_') + 1);
  for (const sample of parseSamples(await scrapeMetrics(port))) {
    if (sample.name === `${histogram}_sum` || sample.name === `${histogram}_count`) add(`${sample.labels.stage}:${part(sample.name)}`, sample.value);
    if (
      (sample.name === 'logistics_fair_share_wait_seconds_sum' || sample.name === 'logistics_fair_share_wait_seconds_count') &&
      sample.labels.queue === queue
    ) {
      add(`wait:${part(sample.name)}`, sample.value);
    }
  }
  return totals;
}

/**
 * Means (ms) between two scrapes: `jobs` (the count of the stage most jobs ran: a job may skip some, such as a store
 * job's first run its look-up and check), `wait` (null when no job waited in a queue), then each stage over the jobs
 * that ran it.
 */
export function stageMeans<S extends string>(
  before: StageCounters,
  after: StageCounters,
  stages: readonly S[],
): { jobs: number; waitMs: number | null } & Record<S, number> {
  const delta = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  const meanMs = (what: string) => (delta(`${what}:count`) > 0 ? (delta(`${what}:sum`) / delta(`${what}:count`)) * 1000 : 0);
  const means = Object.fromEntries(stages.map((stage) => [stage, meanMs(stage)])) as Record<S, number>;
  return { ...means, jobs: Math.max(0, ...stages.map((stage) => delta(`${stage}:count`))), waitMs: delta('wait:count') > 0 ? meanMs('wait') : null };
}
