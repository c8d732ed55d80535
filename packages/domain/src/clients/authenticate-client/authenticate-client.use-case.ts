import { AuthenticationFailedError } from '../../shared/common.errors.js';
import type { ApiKeyHasherPort } from '../../ports/api-key-hasher.port.js';
import type { ApiKeyRepositoryPort } from '../../ports/api-key-repository.port.js';
import type { ClockPort } from '../../ports/clock.port.js';
import { isApiKeyActive, type ApiKeyScope, type StoredApiKey } from '../api-key.js';
import type { Client } from '../client.js';

export interface Credentials {
  /** The value of the Authorization header, if any. */
  authorization: string | undefined;
  /** X-Client-Directory, or the legacy `directory` header when the first is absent. */
  directory: string | undefined;
}

/** Who is calling, and with which key: routes read the client, the gate the scopes. */
export interface AuthenticatedClient {
  client: Client;
  key: { id: number; scopes: readonly ApiKeyScope[] };
}

/**
 * A key's last use is written at most once per this many seconds (per key and
 * process): `keys:list` shows it to the minute, and no request pays a write.
 */
export const LAST_USE_RESOLUTION_SECONDS = 60;

/** Past this many remembered keys, the ones recorded more than a resolution ago are forgotten. */
const REMEMBERED_KEYS = 10_000;

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** The bearer token and the directory the headers name, or null when either is missing or malformed. */
export function readCredentials(credentials: Credentials): { token: string; directory: string } | null {
  const token = BEARER.exec(credentials.authorization ?? '')?.[1];
  const directory = credentials.directory?.trim();
  if (!token || !directory || directory.length > 128) return null;
  return { token, directory };
}

/**
 * Both headers must be present, and the key must be one of that directory's,
 * neither revoked nor expired. Nothing is cached: a key made or revoked works
 * or stops at the next request on every process (ADR 0042).
 */
export class AuthenticateClientUseCase {
  /** Key id -> Unix seconds when this process last recorded its use. */
  private readonly recorded = new Map<number, number>();

  constructor(
    private readonly deps: {
      keys: ApiKeyRepositoryPort;
      hasher: ApiKeyHasherPort;
      clock: ClockPort;
      /** A failed last-use write is reported here; the request goes on. */
      onUseNotRecorded?: (error: unknown) => void;
    },
  ) {}

  async execute(credentials: Credentials): Promise<AuthenticatedClient> {
    const read = readCredentials(credentials);
    if (!read) throw new AuthenticationFailedError();
    const { token, directory } = read;
    const found = await this.deps.keys.findForAuthentication(directory, this.deps.hasher.hash(token));
    // Compared again in constant time, against a dummy when nothing was found, so timing does not tell which directories exist.
    const valid = this.deps.hasher.verify(token, found?.key.keyHash ?? '0'.repeat(64));
    const now = Math.floor(this.deps.clock.now().getTime() / 1000);
    if (!found || !valid || !isApiKeyActive(found.key, now)) throw new AuthenticationFailedError();
    await this.recordUse(found.key, now);
    return { client: found.client, key: { id: found.key.id, scopes: found.key.scopes } };
  }

  private async recordUse(key: StoredApiKey, now: number): Promise<void> {
    const last = Math.max(key.lastUsed ?? -Infinity, this.recorded.get(key.id) ?? -Infinity);
    if (now - last < LAST_USE_RESOLUTION_SECONDS) return;
    this.recorded.set(key.id, now);
    if (this.recorded.size > REMEMBERED_KEYS) {
      for (const [id, at] of this.recorded) if (now - at >= LAST_USE_RESOLUTION_SECONDS) this.recorded.delete(id);
    }
    try {
      await this.deps.keys.recordUse(key.id, now);
    } catch (error) {
      this.deps.onUseNotRecorded?.(error);
    }
  }
}
