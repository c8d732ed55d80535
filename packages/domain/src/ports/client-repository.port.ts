import type { Client, ClientWithKey, CompanyDetails } from '../clients/client.js';

/** Clients (directories) and their hashed API keys. */
export interface ClientRepositoryPort {
  /** Exact, case-sensitive match on the directory id. */
  findByDirectory(directory: string): Promise<ClientWithKey | null>;
  /** Creates the client, or replaces name, company and key hash of an existing directory. */
  upsert(client: { directory: string; name: string; company: CompanyDetails; apiKeyHash: string }): Promise<Client>;
  list(): Promise<Client[]>;
  updateKeyHash(directory: string, apiKeyHash: string): Promise<boolean>;
}
