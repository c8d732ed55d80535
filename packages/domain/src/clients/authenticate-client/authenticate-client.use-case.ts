import { AuthenticationFailedError } from '../../shared/common.errors.js';
import type { ApiKeyHasherPort } from '../../ports/api-key-hasher.port.js';
import type { ClientRepositoryPort } from '../../ports/client-repository.port.js';
import type { Client } from '../client.js';

export interface Credentials {
  /** The value of the Authorization header, if any. */
  authorization: string | undefined;
  /** X-Client-Directory, or the legacy `directory` header when the first is absent. */
  directory: string | undefined;
}

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** Both headers must be present and the key must belong to that directory. */
export class AuthenticateClientUseCase {
  constructor(private readonly deps: { clients: ClientRepositoryPort; hasher: ApiKeyHasherPort }) {}

  async execute(credentials: Credentials): Promise<Client> {
    const token = BEARER.exec(credentials.authorization ?? '')?.[1];
    const directory = credentials.directory?.trim();
    if (!token || !directory || directory.length > 128) throw new AuthenticationFailedError();
    const client = await this.deps.clients.findByDirectory(directory);
    // Hash even when the client is unknown, so timing does not tell which directories exist.
    const valid = this.deps.hasher.verify(token, client?.apiKeyHash ?? '0'.repeat(64));
    if (!client || !valid) throw new AuthenticationFailedError();
    return { id: client.id, directory: client.directory, name: client.name, company: client.company };
  }
}
