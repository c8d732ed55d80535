import type { JobName, JobPayloads, JobResults } from '../jobs/job-definitions.js';

export interface RunJobOptions {
  /** How long the caller waits for the result before giving up with ServiceUnavailableError. */
  timeoutMs: number;
  /** Deterministic id, so a job that is retried or sent twice runs as one. */
  jobId: string;
  /**
   * Bulk work (exports): starts only when no job a request waits for is waiting. Jobs are shared fairly between the
   * payload's directories either way (docs/contribute/decisions/0036-fair-render-scheduling.md).
   */
  bulk?: boolean;
}

/**
 * Runs a job (in-process or on a worker) and waits for its result. Throws
 * ServiceUnavailableError when the queue is down or the result does not come
 * in time; rethrows domain errors of the handler.
 */
export interface JobQueuePort {
  runAndWait<N extends JobName>(name: N, payload: JobPayloads[N], options: RunJobOptions): Promise<JobResults[N]>;
  /** Throws when the queue cannot take jobs (for readiness checks). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
