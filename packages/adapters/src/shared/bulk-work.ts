import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whether the code running now works for a bulk job (an export's render), told by the queue that runs the job to the
 * renderer it reaches through the shared handlers, which keeps pages free for interactive renders
 * (docs/contribute/decisions/0053-worker-pools.md). Unset means interactive.
 */
const bulkWork = new AsyncLocalStorage<true>();

/** Runs `work` as bulk work when `bulk` is true, as it is otherwise. */
export function runAsBulkWork<T>(bulk: boolean, work: () => T): T {
  return bulk ? bulkWork.run(true, work) : work();
}

export function isBulkWork(): boolean {
  return bulkWork.getStore() === true;
}
