import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import type { AppState } from './app-state.js';
import { HttpError } from './http-error.js';

/** JSON bodies of at most 64 KiB; a body of another type is 415, JSON that does not parse 400. */
const JSON_BODY_LIMIT = '64kb';

/**
 * Parses an optional JSON body. Not strict: a JSON scalar (`null`, `12`)
 * parses, so the use case refuses it as a body that is not an object (422),
 * like an array.
 */
export function jsonObjectBody(): Middleware<AppState> {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: JSON_BODY_LIMIT, jsonStrict: false, encoding: 'utf-8' });
  return async (ctx, next) => {
    const hasBody = Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '';
    if (hasBody && !ctx.is('application/json')) throw new HttpError(415);
    await parse(ctx, async () => undefined);
    await next();
  };
}

/** No body at all reads as an empty object; a parsed `null` stays null (and is refused). */
export function requestBody(ctx: { request: unknown }): unknown {
  const body = (ctx.request as { body?: unknown }).body;
  return body === undefined ? {} : body;
}
