import Router from '@koa/router';
import {
  IDEMPOTENCY_HEADER,
  OrderNotFoundError,
  type AttachFilesUseCase,
  type FindOrderByNrUseCase,
  type ListFileCategoriesUseCase,
  type OrderFilesUseCase,
} from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import { jsonObjectBody, requestBody } from '../http/json-body.js';
import { noStore } from '../http/no-store.js';
import { parsePathId, queryPairs } from '../http/path-id.js';
import { respond } from '../http/respond.js';
import { toAttachFilesDto } from '../mappers/attach-files.mapper.js';
import { toFileCategoryDto, toOrderFileDto, toOrderLookupDto } from '../mappers/order.mapper.js';
import type { MultipartUploadReceiver } from '../uploads/multipart-upload.receiver.js';
import { requestOrigin, sendOrderFile } from './file-links.routes.js';
import { idempotent, REPLAYED_HEADER, type IdempotencyDeps } from '../middleware/idempotency.middleware.js';
import { FILE_LINK_PREFIX } from '../http/redact-path.js';

export interface OrderRouteDeps extends IdempotencyDeps {
  listFileCategories: ListFileCategoriesUseCase;
  findOrderByNr: FindOrderByNrUseCase;
  attachFiles: AttachFilesUseCase;
  receiver: MultipartUploadReceiver;
  orderFiles: OrderFilesUseCase;
}

function orderIdOf(raw: string | undefined): number {
  const id = parsePathId(raw);
  if (id === null) throw new OrderNotFoundError();
  return id;
}

/** A bad file id on a good order is `File not found`; the order is checked first (by the use case). */
function fileIdOf(raw: string | undefined): number {
  return parsePathId(raw) ?? 0;
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

  router.get('/orders/:orderId/files', async (ctx) => {
    const files = await deps.orderFiles.list(ctx.state.client.directory, orderIdOf(ctx.params.orderId));
    respond(ctx, 200, 'OK', files.map(toOrderFileDto));
  });

  router.post('/orders/:orderId/files', async (ctx) => {
    const orderId = orderIdOf(ctx.params.orderId);
    let cleanup = async (): Promise<void> => undefined;
    try {
      const payload = await deps.attachFiles.execute({
        directory: ctx.state.client.directory,
        orderId,
        requestId: ctx.state.requestId,
        // An empty value counts as not sent, as for every parameter.
        idempotencyKey: ctx.get(IDEMPOTENCY_HEADER) || undefined,
        receive: async (newKey) => {
          const received = await deps.receiver.receive(ctx, newKey);
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

  router.get('/orders/:orderId/files/:fileId', async (ctx) => {
    await sendOrderFile(ctx, await deps.orderFiles.download(ctx.state.client.directory, orderIdOf(ctx.params.orderId), fileIdOf(ctx.params.fileId)));
  });

  // No cache keeps a link, an error answer included (no-store before the handler runs).
  const linkedFileExists = (ctx: { state: AppState; params: Record<string, string> }) =>
    deps.orderFiles.assertFile(ctx.state.client.directory, orderIdOf(ctx.params.orderId), fileIdOf(ctx.params.fileId));
  router.post('/orders/:orderId/files/:fileId/link', noStore(), jsonObjectBody(), idempotent(deps, { exists: linkedFileExists }), async (ctx) => {
    const orderId = orderIdOf(ctx.params.orderId);
    const link = await deps.orderFiles.link(ctx.state.client.directory, orderId, fileIdOf(ctx.params.fileId), requestBody(ctx), ctx.state.apiKey!.id);
    const url = link.kind === 'presigned' ? link.url : `${requestOrigin(ctx)}${FILE_LINK_PREFIX}${link.token}`;
    respond(ctx, 201, 'File link created', { url, expires: link.expires });
  });
}
