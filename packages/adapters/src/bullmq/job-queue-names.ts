import type { JobName } from '@logi/domain';
import type { WorkerQueueName } from '@logi/config';

/**
 * One BullMQ queue per kind of job, so slow PDF renders never hold up file
 * stores and each can be watched and scaled on its own.
 */
export const QUEUE_NAME_BY_JOB: Readonly<Record<JobName, WorkerQueueName>> = {
  'render-invoice-pdf': 'pdf',
  'store-order-file': 'uploads',
};

/**
 * Bulk jobs (RunJobOptions.bulk: exports' renders) on queues of their own, so operators can run them on workers of
 * their own (WORKER_QUEUES, docs/contribute/decisions/0053-worker-pools.md). A kind without one keeps bulk jobs on
 * its queue, behind the others (ADR 0036).
 */
export const BULK_QUEUE_NAME_BY_JOB: Readonly<Partial<Record<JobName, WorkerQueueName>>> = {
  'render-invoice-pdf': 'pdf-bulk',
};

/** The queue a job goes on. */
export function queueNameOf(name: JobName, bulk: boolean): WorkerQueueName {
  return (bulk ? BULK_QUEUE_NAME_BY_JOB[name] : undefined) ?? QUEUE_NAME_BY_JOB[name];
}

/** Every BullMQ queue: its name, the job it holds, and whether its jobs are bulk. */
export const JOB_QUEUES: ReadonlyArray<{ queue: WorkerQueueName; job: JobName; bulk: boolean }> = [
  ...(Object.entries(QUEUE_NAME_BY_JOB) as Array<[JobName, WorkerQueueName]>).map(([job, queue]) => ({ queue, job, bulk: false })),
  ...(Object.entries(BULK_QUEUE_NAME_BY_JOB) as Array<[JobName, WorkerQueueName]>).map(([job, queue]) => ({ queue, job, bulk: true })),
];

/** Keys of every queue start with this unless told otherwise: REDIS_PREFIX's default, so API and worker meet. */
export const DEFAULT_QUEUE_PREFIX = 'logistics';
