import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { BullmqQueueInspector } from '@logi/adapters';

export type BullBoardMiddleware = ReturnType<KoaAdapter['registerPlugin']>;

/**
 * bull-board's pages and API for the queues, under `basePath`. Imported only
 * when the dashboard is on: bull-board and its page renderer are about a
 * fifth of the API's start-up, which an API without the dashboard never pays.
 */
export function bullBoardMiddleware(inspector: BullmqQueueInspector, basePath: string): BullBoardMiddleware {
  const serverAdapter = new KoaAdapter();
  serverAdapter.setBasePath(basePath);
  createBullBoard({
    queues: inspector.queues.map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Logistics queues' } },
  });
  return serverAdapter.registerPlugin();
}
