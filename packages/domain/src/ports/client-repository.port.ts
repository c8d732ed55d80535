import type { Client, CompanyDetails } from '../clients/client.js';

/** Clients (directories); their API keys are in ApiKeyRepositoryPort. */
export interface ClientRepositoryPort {
  /** Exact, case-sensitive match on the directory id. */
  findByDirectory(directory: string): Promise<Client | null>;
  /** Creates the client, or replaces name and company of an existing directory. */
  upsert(client: { directory: string; name: string; company: CompanyDetails }): Promise<Client>;
  list(): Promise<Client[]>;
}
