import { API_KEY_SCOPES, isApiKeyScope, type ApiKey, type ApiKeyScope, type StoredApiKey } from '@logi/domain';
import { toNullableNumber, toNumber, toText } from './sql-values.js';

export const API_KEY_COLUMNS = ['id', 'directory', 'name', 'key_hash', 'scopes', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'] as const;

export type ApiKeyRow = Record<(typeof API_KEY_COLUMNS)[number], unknown>;

export function toStoredApiKey(row: ApiKeyRow): StoredApiKey {
  return { ...toApiKey(row), keyHash: toText(row.key_hash, 'api_keys.key_hash') };
}

/** Allow-list of what an operator sees: never the hash. */
export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: toNumber(row.id, 'api_keys.id'),
    directory: toText(row.directory, 'api_keys.directory'),
    name: toText(row.name, 'api_keys.name'),
    scopes: scopesOf(toText(row.scopes, 'api_keys.scopes')),
    created: toNumber(row.created_at, 'api_keys.created_at'),
    expires: toNullableNumber(row.expires_at, 'api_keys.expires_at'),
    lastUsed: toNullableNumber(row.last_used_at, 'api_keys.last_used_at'),
    revoked: toNullableNumber(row.revoked_at, 'api_keys.revoked_at'),
  };
}

/** Stored in the canonical order; an unknown name (a later release's scope) grants nothing here. */
export function scopesColumn(scopes: readonly ApiKeyScope[]): string {
  return API_KEY_SCOPES.filter((scope) => scopes.includes(scope)).join(',');
}

function scopesOf(text: string): ApiKeyScope[] {
  return text.split(',').filter(isApiKeyScope);
}
