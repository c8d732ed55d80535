import { API_KEY_SCOPES, type ApiKeyScope } from '@logi/domain';

/** `path` is the route's pattern below /v1 (`/webhook-endpoints/:endpointId` or the OpenAPI `{endpoint_id}` form). */
type Applies = (method: string, path: string) => boolean;

const under = (prefix: string) => (path: string) => path === prefix || path.startsWith(`${prefix}/`);
const isWebhookEndpoints = under('/webhook-endpoints');
const isRead = (method: string) => method === 'GET' || method === 'HEAD';
/** A path parameter of a pattern in either form: `:endpointId` or `{endpoint_id}`. */
const PARAM = String.raw`(?::[A-Za-z]+|\{[a-z_]+\})`;
/** Creating, changing and replaying an endpoint decide where client data is sent. */
const SENDS_DATA_OUT = new RegExp(String.raw`^(?:POST /webhook-endpoints|PATCH /webhook-endpoints/${PARAM}|POST /webhook-endpoints/${PARAM}/replay)$`);
/** A link hands out the file's bytes to whoever holds it. */
const FILE_LINK = new RegExp(String.raw`^POST /orders/${PARAM}/files/${PARAM}/link$`);

/**
 * Which scopes each client route needs (contract "API keys with scopes"):
 * every rule that applies adds its scope. Declared once, here, for every
 * route there is and will be. Read from the route's pattern, never the raw
 * path, so a path in another letter case cannot pick another rule.
 */
const SCOPE_RULES: ReadonlyArray<{ scope: ApiKeyScope; applies: Applies }> = [
  // Managing webhook endpoints, reads included: their deliveries show where data goes.
  { scope: 'webhooks', applies: (_method, path) => isWebhookEndpoints(path) },
  // Whatever hands data out: reads, a file link, and pointing or replaying an endpoint (data sent elsewhere).
  {
    scope: 'read',
    applies: (method, path) => (isRead(method) && !isWebhookEndpoints(path)) || FILE_LINK.test(`${method} ${path}`) || SENDS_DATA_OUT.test(`${method} ${path}`),
  },
  // What stores or changes data outside the endpoints: uploads, exports made or deleted.
  { scope: 'write', applies: (method, path) => !isRead(method) && !isWebhookEndpoints(path) && !FILE_LINK.test(`${method} ${path}`) },
];

/**
 * The scopes a client route needs, in the order a missing one is named (read,
 * write, webhooks); `method` in upper case or not, `path` the route's pattern below /v1.
 */
export function requiredScopes(method: string, path: string): ApiKeyScope[] {
  const upper = method.toUpperCase();
  return API_KEY_SCOPES.filter((scope) => SCOPE_RULES.some((rule) => rule.scope === scope && rule.applies(upper, path)));
}
