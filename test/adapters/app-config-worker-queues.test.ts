import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, WORKER_QUEUE_NAMES } from '@logi/config';
import { JOB_QUEUES } from '@logi/adapters';

/** WORKER_QUEUES (docs/contribute/decisions/0053-worker-pools.md): what a worker process takes. */
describe('WORKER_QUEUES', () => {
  it.each([
    [undefined, ['pdf', 'uploads', 'webhooks', 'events', 'pdf-bulk', 'exports']],
    ['all', ['pdf', 'uploads', 'webhooks', 'events', 'pdf-bulk', 'exports']],
    ['interactive', ['pdf', 'uploads', 'webhooks', 'events']],
    ['bulk', ['pdf-bulk', 'exports']],
    [' pdf-bulk , pdf ', ['pdf', 'pdf-bulk']],
    ['bulk,webhooks', ['webhooks', 'pdf-bulk', 'exports']],
  ])('when it is %j, then the worker takes %j', (value, queues) => {
    expect(loadConfig(value === undefined ? {} : { WORKER_QUEUES: value }).workerQueues).toEqual(queues);
  });

  it.each(['pdf,nope', 'Interactive', 'pdf,,uploads'])('when it is %j, then the error names WORKER_QUEUES and the entry', (value) => {
    const entry = value.split(',').find((part) => !(WORKER_QUEUE_NAMES as readonly string[]).includes(part.trim()))!;
    expect(() => loadConfig({ WORKER_QUEUES: value })).toThrow(
      new ConfigError('WORKER_QUEUES', `must be all, interactive, bulk or a comma list of ${WORKER_QUEUE_NAMES.join(', ')} (got "${entry}")`),
    );
  });

  it('when the BullMQ queues are listed, then WORKER_QUEUES can name each of them', () => {
    for (const { queue } of JOB_QUEUES) expect(WORKER_QUEUE_NAMES).toContain(queue);
    expect(JOB_QUEUES.map((q) => [q.queue, q.bulk])).toEqual([
      ['pdf', false],
      ['uploads', false],
      ['pdf-bulk', true],
    ]);
  });
});
