import type { Middleware } from 'koa';
import { AuthenticationFailedError, type AuthenticateClientUseCase, type Client } from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * Credentials are checked first, so that a valid client is counted under its
 * directory (else under its IP), but a 429 is answered before a 401.
 */
export function clientGate(deps: { authenticate: AuthenticateClientUseCase; limiter: RateLimiter }): Middleware<AppState> {
  return async (ctx, next) => {
    const client = await authenticateOrNull(deps.authenticate, {
      authorization: ctx.get('Authorization') || undefined,
      directory: ctx.get('X-Client-Directory') || ctx.get('directory') || undefined,
    });
    await deps.limiter.count(ctx, client ? `client:${client.directory}` : `ip:${ctx.ip}`);
    if (!client) throw new AuthenticationFailedError();
    ctx.state.client = client;
    await next();
  };
}

async function authenticateOrNull(
  useCase: AuthenticateClientUseCase,
  credentials: Parameters<AuthenticateClientUseCase['execute']>[0],
): Promise<Client | null> {
  try {
    return await useCase.execute(credentials);
  } catch (error) {
    if (error instanceof AuthenticationFailedError) return null;
    throw error;
  }
}
