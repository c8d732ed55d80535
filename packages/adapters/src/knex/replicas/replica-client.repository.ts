import type { Client, ClientRepositoryPort, ClientWithKey, CompanyDetails } from '@logi/domain';
import { KnexClientRepository } from '../knex-client.repository.js';
import type { ReadReplicas, ReadTarget } from './read-replicas.js';

/**
 * A client's company data (the seller on a PDF or an e-invoice) read where
 * ReadReplicas sends reads now, beside the invoice it is printed with; the
 * writes go to the primary. Authentication keeps its own repository on the
 * primary, so a key made or changed by the CLI works at once.
 */
export class ReplicaClientRepository implements ClientRepositoryPort {
  private readonly on: (target: ReadTarget) => KnexClientRepository;

  constructor(private readonly replicas: ReadReplicas) {
    this.on = replicas.each((knex) => new KnexClientRepository(knex));
  }

  findByDirectory(directory: string): Promise<ClientWithKey | null> {
    return this.replicas.read((target) => this.on(target).findByDirectory(directory));
  }

  upsert(client: { directory: string; name: string; company: CompanyDetails; apiKeyHash: string }): Promise<Client> {
    return this.on(this.replicas.primary).upsert(client);
  }

  list(): Promise<Client[]> {
    return this.on(this.replicas.primary).list();
  }

  updateKeyHash(directory: string, apiKeyHash: string): Promise<boolean> {
    return this.on(this.replicas.primary).updateKeyHash(directory, apiKeyHash);
  }
}
