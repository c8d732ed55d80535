import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from '../http/app-state.js';

const VALID_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * Gives each request an id (the client's X-Request-Id when it is up to 128
 * visible ASCII characters), echoes it, and writes one log line per request.
 */
export function requestContext(logger: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = VALID_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      ctx.state.log.info(
        {
          method: ctx.method,
          // Set by @koa/router on a match: the pattern, never the raw URL with ids in it.
          route: (ctx as { _matchedRoute?: string })._matchedRoute ?? null,
          status: ctx.status,
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          directory: ctx.state.client?.directory ?? null,
          apiKeyId: ctx.state.apiKey?.id ?? null,
        },
        'request',
      );
    }
  };
}
