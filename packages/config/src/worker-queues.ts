/**
 * What a worker process can take (WORKER_QUEUES): the BullMQ queues (`pdf`: renders a request waits for, `pdf-bulk`:
 * exports' renders, `uploads`: file stores) and the work claimed from the database (`exports`: the export runner,
 * `webhooks`: deliveries, `events`: publishing captured changes) (docs/contribute/decisions/0053-worker-pools.md).
 */
export const WORKER_QUEUE_NAMES = ['pdf', 'uploads', 'webhooks', 'events', 'pdf-bulk', 'exports'] as const;
export type WorkerQueueName = (typeof WORKER_QUEUE_NAMES)[number];

/** WORKER_QUEUES' groups: `interactive` is what someone waits for, `bulk` the exports. */
export const WORKER_QUEUE_GROUPS: Readonly<Record<'all' | 'interactive' | 'bulk', readonly WorkerQueueName[]>> = {
  all: WORKER_QUEUE_NAMES,
  interactive: ['pdf', 'uploads', 'webhooks', 'events'],
  bulk: ['pdf-bulk', 'exports'],
};

/**
 * Parses WORKER_QUEUES: `all`, `interactive`, `bulk`, or a comma list of queue names (groups allowed in it). The names
 * it picks, in WORKER_QUEUE_NAMES' order, or the first entry that is neither.
 */
export function parseWorkerQueues(value: string): { queues: WorkerQueueName[] } | { unknown: string } {
  const taken = new Set<WorkerQueueName>();
  for (const entry of value.split(',').map((part) => part.trim())) {
    const names = (WORKER_QUEUE_GROUPS as Record<string, readonly WorkerQueueName[]>)[entry] ?? (isWorkerQueueName(entry) ? [entry] : null);
    if (!names) return { unknown: entry };
    for (const queue of names) taken.add(queue);
  }
  return { queues: WORKER_QUEUE_NAMES.filter((queue) => taken.has(queue)) };
}

function isWorkerQueueName(value: string): value is WorkerQueueName {
  return (WORKER_QUEUE_NAMES as readonly string[]).includes(value);
}
