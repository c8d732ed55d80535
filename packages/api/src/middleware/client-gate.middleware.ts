import type { Context, Next } from 'koa';
import { AuthenticationFailedError, requireScopes, type ApiKeyScope, type AuthenticateClientUseCase, type AuthenticatedClient } from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import type { RateLimiter } from './rate-limiter.js';

export type ClientGate = (ctx: Context & { state: AppState }, scopes: readonly ApiKeyScope[], next: Next) => Promise<void>;

/**
 * Credentials are checked first, so that a valid client is counted under its
 * directory (else under its IP), but a 429 is answered before a 401; then the
 * key's scopes (403, before the route's own 404 and 422).
 */
export function clientGate(deps: { authenticate: AuthenticateClientUseCase; limiter: RateLimiter }): ClientGate {
  return async (ctx, scopes, next) => {
    const authenticated = await authenticateOrNull(deps.authenticate, {
      authorization: ctx.get('Authorization') || undefined,
      directory: ctx.get('X-Client-Directory') || ctx.get('directory') || undefined,
    });
    await deps.limiter.count(ctx, authenticated ? `client:${authenticated.client.directory}` : `ip:${ctx.ip}`);
    if (!authenticated) throw new AuthenticationFailedError();
    ctx.state.client = authenticated.client;
    ctx.state.apiKey = authenticated.key;
    requireScopes(authenticated.key, scopes);
    await next();
  };
}

async function authenticateOrNull(
  useCase: AuthenticateClientUseCase,
  credentials: Parameters<AuthenticateClientUseCase['execute']>[0],
): Promise<AuthenticatedClient | null> {
  try {
    return await useCase.execute(credentials);
  } catch (error) {
    if (error instanceof AuthenticationFailedError) return null;
    throw error;
  }
}
