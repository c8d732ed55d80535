import type { JobName } from '@logi/domain';

/**
 * One BullMQ queue per kind of job, so slow PDF renders never hold up file
 * stores and each can be watched and scaled on its own.
 */
export const QUEUE_NAME_BY_JOB: Readonly<Record<JobName, string>> = {
  'render-invoice-pdf': 'pdf',
  'store-order-file': 'uploads',
};

/** Keys of every queue start with this unless told otherwise: REDIS_PREFIX's default, so API and worker meet. */
export const DEFAULT_QUEUE_PREFIX = 'logistics';
