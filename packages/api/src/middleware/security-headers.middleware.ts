import type { Middleware } from 'koa';

/**
 * Headers every answer carries, errors and operators' pages included:
 * `X-Content-Type-Options: nosniff`, so a browser renders a body only as the
 * type it was sent with (an uploaded file served as `text/plain` is never run
 * as HTML or script). Set before anything else runs; the error handler keeps
 * headers it did not set itself.
 */
export function securityHeaders(): Middleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
  };
}
