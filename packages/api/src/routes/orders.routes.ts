import Router from '@koa/router';
import { IDEMPOTENCY_HEADER, OrderNotFoundError, type AttachFilesUseCase, type FindOrderByNrUseCase, type ListFileCategoriesUseCase } from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import { parsePathId, queryPairs } from '../http/path-id.js';
import { respond } from '../http/respond.js';
import { toAttachFilesDto } from '../mappers/attach-files.mapper.js';
import { toFileCategoryDto, toOrderLookupDto } from '../mappers/order.mapper.js';
import type { MultipartUploadReceiver } from '../uploads/multipart-upload.receiver.js';

/** Sent, as `true`, on the kept answer of an earlier request with the same Idempotency-Key. */
export const REPLAYED_HEADER = 'Idempotency-Replayed';

export interface OrderRouteDeps {
  listFileCategories: ListFileCategoriesUseCase;
  findOrderByNr: FindOrderByNrUseCase;
  attachFiles: AttachFilesUseCase;
  receiver: MultipartUploadReceiver;
}

export function registerOrderRoutes(router: Router<AppState>, deps: OrderRouteDeps): void {
  router.get('/orders/file-categories', async (ctx) => {
    const categories = await deps.listFileCategories.execute();
    respond(ctx, 200, 'OK', categories.map(toFileCategoryDto));
  });

  router.get('/orders/by-nr', async (ctx) => {
    const order = await deps.findOrderByNr.execute({ directory: ctx.state.client.directory, query: queryPairs(ctx.querystring) });
    respond(ctx, 200, 'OK', toOrderLookupDto(order));
  });

  router.post('/orders/:orderId/files', async (ctx) => {
    const orderId = parsePathId(ctx.params.orderId);
    if (orderId === null) throw new OrderNotFoundError();
    let cleanup = async (): Promise<void> => undefined;
    try {
      const payload = await deps.attachFiles.execute({
        directory: ctx.state.client.directory,
        orderId,
        requestId: ctx.state.requestId,
        // An empty value counts as not sent, as for every parameter.
        idempotencyKey: ctx.get(IDEMPOTENCY_HEADER) || undefined,
        receive: async () => {
          const received = await deps.receiver.receive(ctx);
          cleanup = received.cleanup;
          return received.upload;
        },
      });
      if (payload.replayed) ctx.set(REPLAYED_HEADER, 'true');
      respond(ctx, 201, payload.message, toAttachFilesDto(payload));
    } finally {
      await cleanup();
    }
  });
}
