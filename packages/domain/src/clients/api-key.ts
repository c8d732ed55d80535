import { ApiKeyScopeMissingError } from './api-keys.errors.js';

/**
 * What a key may do (contract "API keys with scopes"): `webhooks` for the
 * webhook endpoints, `write` for what stores or changes data, `read` for
 * whatever hands data out. A route may need several (creating an endpoint
 * needs `webhooks` and `read`). Which route needs which is one rule in the API
 * layer (packages/api/src/http/required-scope.ts). The order here is the order
 * a missing scope is named in.
 */
export const API_KEY_SCOPES = ['read', 'write', 'webhooks'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Longest lifetime `--expires-in-days` may give a key (ten years). */
export const API_KEY_MAX_DAYS = 3650;

/** A key of a client directory, as an operator sees it (never the key itself). Times are Unix seconds. */
export interface ApiKey {
  id: number;
  directory: string;
  name: string;
  scopes: ApiKeyScope[];
  created: number;
  /** Null: the key never expires. */
  expires: number | null;
  /** When the key was last accepted, to the minute or so; null: never. */
  lastUsed: number | null;
  /** Null: the key is not revoked. */
  revoked: number | null;
}

/** A key as stored: with the hash of the key, which only authentication reads. */
export interface StoredApiKey extends ApiKey {
  keyHash: string;
}

export function isApiKeyScope(value: string): value is ApiKeyScope {
  return (API_KEY_SCOPES as readonly string[]).includes(value);
}

/**
 * A comma-separated list of scopes (`read,write`), spaces around items
 * ignored, duplicates dropped, in the canonical order; null when empty or
 * when an item is not a scope.
 */
export function parseApiKeyScopes(text: string): ApiKeyScope[] | null {
  const items = text.split(',').map((item) => item.trim());
  if (items.some((item) => !isApiKeyScope(item))) return null;
  return API_KEY_SCOPES.filter((scope) => items.includes(scope));
}

/** Whether a key is accepted at `now` (Unix seconds): not revoked, not expired. */
export function isApiKeyActive(key: Pick<ApiKey, 'expires' | 'revoked'>, now: number): boolean {
  return key.revoked === null && (key.expires === null || now < key.expires);
}

/** A request that needs `scopes`, made with a key that lacks one, is refused (403 naming the first missing one, in the order read, write, webhooks). */
export function requireScopes(key: { scopes: readonly ApiKeyScope[] }, scopes: readonly ApiKeyScope[]): void {
  const missing = API_KEY_SCOPES.find((scope) => scopes.includes(scope) && !key.scopes.includes(scope));
  if (missing) throw new ApiKeyScopeMissingError(missing);
}
