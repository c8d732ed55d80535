import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';

export type BullBoardMiddleware = ReturnType<KoaAdapter['registerPlugin']>;

/** The queues the dashboard drives: BullMQ's Queue objects, from the queue inspector the composition root binds. */
export interface DashboardQueues {
  readonly queues: ReadonlyArray<ConstructorParameters<typeof BullMQAdapter>[0]>;
}

/**
 * bull-board's pages and API for the queues, under `basePath`. Imported only
 * when the dashboard is on: bull-board and its page renderer are about a
 * fifth of the API's start-up, which an API without the dashboard never pays.
 */
export function bullBoardMiddleware(inspector: DashboardQueues, basePath: string, options: { write: boolean }): BullBoardMiddleware {
  const serverAdapter = new KoaAdapter();
  serverAdapter.setBasePath(basePath);
  createBullBoard({
    // Read-only: bull-board hides its buttons and refuses its write routes (the router in front refuses them first).
    queues: inspector.queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: !options.write })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Logistics queues' } },
  });
  return serverAdapter.registerPlugin();
}
