import { failureReason, JOB_NAMES, type JobHandler, type JobHandlers, type JobName } from '@logi/domain';
import type { WorkerMetrics } from './worker-metrics.js';

/**
 * The job handlers, each timed and counted: the BullMQ worker adapter and the
 * domain handlers stay free of metrics. Every attempt counts (a retried job
 * shows one failure and then its outcome), which is what load on a worker is.
 * `queueNames` (the queue adapter's, from the root) label each job's series.
 */
export function withJobMetrics(handlers: JobHandlers, metrics: WorkerMetrics, queueNames: Readonly<Record<JobName, string>>): JobHandlers {
  const instrument = <N extends JobName>(name: N, handler: JobHandler<N>): JobHandler<N> => {
    const labels = { queue: queueNames[name], job: name };
    // Series exist from the start, so a dashboard shows 0 rather than nothing before the first job.
    metrics.jobsInProgress.set(labels, 0);
    return async (payload, run) => {
      metrics.jobsInProgress.inc(labels);
      const stopTimer = metrics.jobDuration.startTimer(labels);
      try {
        const result = await handler(payload, run);
        stopTimer({ outcome: 'completed' });
        return result;
      } catch (error) {
        stopTimer({ outcome: 'failed' });
        metrics.jobFailures.inc({ ...labels, reason: failureReason(error) });
        throw error;
      } finally {
        metrics.jobsInProgress.dec(labels);
      }
    };
  };
  return Object.fromEntries(JOB_NAMES.map((name) => [name, instrument(name, handlers[name] as JobHandler<typeof name>)])) as unknown as JobHandlers;
}
