import type Router from '@koa/router';
import { envelope, WebhookEndpointNotFoundError, type ManageWebhookEndpointsUseCase } from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import { jsonObjectBody, requestBody } from '../http/json-body.js';
import { noStore } from '../http/no-store.js';
import { idempotent, type IdempotencyDeps } from '../middleware/idempotency.middleware.js';
import { parsePathId, queryPairs } from '../http/path-id.js';
import { toCreatedWebhookEndpointDto, toWebhookDeliveriesDto, toWebhookEndpointDto } from '../mappers/webhook.mapper.js';

export interface WebhookEndpointRouteDeps extends IdempotencyDeps {
  manageWebhooks: ManageWebhookEndpointsUseCase;
}

function endpointId(raw: string | undefined): number {
  const id = parsePathId(raw);
  if (id === null) throw new WebhookEndpointNotFoundError();
  return id;
}

export function registerWebhookEndpointRoutes(router: Router<AppState>, deps: WebhookEndpointRouteDeps): void {
  const webhooks = deps.manageWebhooks;
  const body = jsonObjectBody();

  // The 201 holds the signing secret: a retry's copy of it is kept sealed.
  router.post('/webhook-endpoints', noStore(), body, idempotent(deps, { secret: true }), async (ctx) => {
    const { endpoint, secret } = await webhooks.create(ctx.state.client.directory, requestBody(ctx));
    ctx.status = 201;
    ctx.body = envelope(201, 'Webhook endpoint created', toCreatedWebhookEndpointDto(endpoint, secret));
  });

  router.get('/webhook-endpoints', async (ctx) => {
    ctx.body = envelope(200, 'OK', (await webhooks.list(ctx.state.client.directory)).map(toWebhookEndpointDto));
  });

  router.get('/webhook-endpoints/:endpointId', async (ctx) => {
    ctx.body = envelope(200, 'OK', toWebhookEndpointDto(await webhooks.get(ctx.state.client.directory, endpointId(ctx.params.endpointId))));
  });

  router.patch('/webhook-endpoints/:endpointId', body, async (ctx) => {
    const id = endpointId(ctx.params.endpointId);
    ctx.body = envelope(200, 'OK', toWebhookEndpointDto(await webhooks.update(ctx.state.client.directory, id, requestBody(ctx))));
  });

  router.delete('/webhook-endpoints/:endpointId', async (ctx) => {
    await webhooks.remove(ctx.state.client.directory, endpointId(ctx.params.endpointId));
    ctx.body = envelope(200, 'Webhook endpoint deleted', null);
  });

  router.post('/webhook-endpoints/:endpointId/rotate-secret', noStore(), body, async (ctx) => {
    const secret = await webhooks.rotateSecret(ctx.state.client.directory, endpointId(ctx.params.endpointId));
    ctx.body = envelope(200, 'OK', { secret });
  });

  router.get('/webhook-endpoints/:endpointId/deliveries', async (ctx) => {
    const page = await webhooks.deliveries(ctx.state.client.directory, endpointId(ctx.params.endpointId), queryPairs(ctx.querystring));
    ctx.body = envelope(200, 'OK', toWebhookDeliveriesDto(page));
  });

  router.post('/webhook-endpoints/:endpointId/replay', body, async (ctx) => {
    const result = await webhooks.replay(ctx.state.client.directory, endpointId(ctx.params.endpointId), requestBody(ctx));
    ctx.status = 202;
    ctx.body = envelope(202, 'Replay scheduled', { scheduled: result.scheduled });
  });
}
