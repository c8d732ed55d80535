import type { Middleware } from 'koa';

/**
 * For answers that carry a secret (a webhook signing secret) or a link that
 * works without credentials (a file link): `Cache-Control: no-store`, so no
 * browser or proxy cache keeps a copy. Set before the handler runs, so its
 * error answers carry it too.
 */
export function noStore<State>(): Middleware<State> {
  return async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
