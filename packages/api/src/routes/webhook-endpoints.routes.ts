import type Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { envelope, WebhookEndpointNotFoundError, type ManageWebhookEndpointsUseCase } from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import { HttpError } from '../http/http-error.js';
import { parsePathId, queryPairs } from '../http/path-id.js';
import { toCreatedWebhookEndpointDto, toWebhookDeliveriesDto, toWebhookEndpointDto } from '../mappers/webhook.mapper.js';

export interface WebhookEndpointRouteDeps {
  manageWebhooks: ManageWebhookEndpointsUseCase;
}

/** JSON bodies of at most 64 KiB; a body of another type is 415, JSON that does not parse 400 (exports use it too). */
const JSON_BODY_LIMIT = '64kb';

export function jsonBody(): Middleware<AppState> {
  // Not strict: a JSON scalar (`null`, `12`) parses, so it is refused as a body that is not an object (422), like an array.
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: JSON_BODY_LIMIT, jsonStrict: false, encoding: 'utf-8' });
  return async (ctx, next) => {
    const hasBody = Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '';
    if (hasBody && !ctx.is('application/json')) throw new HttpError(415);
    await parse(ctx, async () => undefined);
    await next();
  };
}

function endpointId(raw: string | undefined): number {
  const id = parsePathId(raw);
  if (id === null) throw new WebhookEndpointNotFoundError();
  return id;
}

export function registerWebhookEndpointRoutes(router: Router<AppState>, deps: WebhookEndpointRouteDeps): void {
  const webhooks = deps.manageWebhooks;
  const body = jsonBody();
  // No body at all reads as an empty object; a parsed `null` stays null (and is refused).
  const requestBody = (ctx: { request: unknown }) => {
    const body = (ctx.request as { body?: unknown }).body;
    return body === undefined ? {} : body;
  };

  router.post('/webhook-endpoints', body, async (ctx) => {
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

  router.post('/webhook-endpoints/:endpointId/rotate-secret', body, async (ctx) => {
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
