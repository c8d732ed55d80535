import type { ApiKey, ApiKeyScope, StoredApiKey } from '../clients/api-key.js';
import type { Client } from '../clients/client.js';

/** The API keys of client directories, stored as hashes (several per directory). Times are Unix seconds. */
export interface ApiKeyRepositoryPort {
  /**
   * The key with this hash in this directory (exact, case-sensitive), with its
   * client, revoked and expired keys included: one index lookup, on the
   * primary, so a key made or revoked works or stops at once.
   */
  findForAuthentication(directory: string, keyHash: string): Promise<{ key: StoredApiKey; client: Client } | null>;
  /** Stores a new key of an existing directory; the hash must be of a fresh key. */
  create(key: { directory: string; name: string; keyHash: string; scopes: ApiKeyScope[]; created: number; expires: number | null }): Promise<ApiKey>;
  /** The directory's key `id`, revoked and expired included (on the primary, so a revocation counts at once); null when there is none. */
  findById(directory: string, id: number): Promise<ApiKey | null>;
  /** Every key of the directory, revoked ones too, oldest first. */
  list(directory: string): Promise<ApiKey[]>;
  /**
   * Revokes the directory's key `id` at `at`; a key revoked before stays as it
   * was (`revokedNow` false). Null when the directory has no such key.
   */
  revoke(directory: string, id: number, at: number): Promise<{ key: ApiKey; revokedNow: boolean } | null>;
  /** Revokes every key of the directory not revoked yet; how many. */
  revokeAll(directory: string, at: number): Promise<number>;
  /** Sets when the key was last accepted (called at most about once a minute per key and process). */
  recordUse(id: number, at: number): Promise<void>;
}
