import type { Middleware } from 'koa';
import { HttpError } from '../http/http-error.js';

export const MAX_QUERY_BYTES = 8 * 1024;

/** A query string over 8 KiB is refused before anything else reads it. */
export function queryLimit(): Middleware {
  return async (ctx, next) => {
    if (Buffer.byteLength(ctx.querystring) > MAX_QUERY_BYTES) throw new HttpError(414);
    await next();
  };
}
