import type { ApiKeyScope } from '@logi/domain';

interface ScopeRule {
  scope: ApiKeyScope;
  /** `path` is the route's pattern below /v1 (`/webhook-endpoints/:endpointId` or the OpenAPI `{endpoint_id}` form). */
  applies(method: string, path: string): boolean;
}

const under = (prefix: string) => (path: string) => path === prefix || path.startsWith(`${prefix}/`);
const isWebhookEndpoints = under('/webhook-endpoints');

/**
 * Which scope each client route needs (contract "API keys with scopes"), the
 * first rule that applies: declared once, here, for every route there is and
 * will be. Read from the route's pattern, never the raw path, so a path in
 * another letter case cannot pick another rule.
 */
const SCOPE_RULES: readonly ScopeRule[] = [
  // Managing webhook endpoints, reads included: their deliveries show where data goes.
  { scope: 'webhooks', applies: (_method, path) => isWebhookEndpoints(path) },
  { scope: 'read', applies: (method) => method === 'GET' || method === 'HEAD' },
  // Everything else stores or changes something: uploads, exports made or deleted, file links.
  { scope: 'write', applies: () => true },
];

/** The one scope a client route needs; `method` in upper case, `path` the route's pattern below /v1. */
export function requiredScope(method: string, path: string): ApiKeyScope {
  return SCOPE_RULES.find((rule) => rule.applies(method.toUpperCase(), path))!.scope;
}
