import type { Client, ClientRepositoryPort, CompanyDetails } from '@logi/domain';
import { KnexClientRepository } from '../knex-client.repository.js';
import type { ReadReplicas, ReadTarget } from './read-replicas.js';

/**
 * A client's company data (the seller on a PDF or an e-invoice) read where
 * ReadReplicas sends reads now, beside the invoice it is printed with; the
 * writes go to the primary. Authentication reads keys (KnexApiKeyRepository)
 * on the primary, so a key made or revoked by the CLI works or stops at once.
 */
export class ReplicaClientRepository implements ClientRepositoryPort {
  private readonly on: (target: ReadTarget) => KnexClientRepository;

  constructor(private readonly replicas: ReadReplicas) {
    this.on = replicas.each((knex) => new KnexClientRepository(knex));
  }

  findByDirectory(directory: string): Promise<Client | null> {
    return this.replicas.read((target) => this.on(target).findByDirectory(directory));
  }

  upsert(client: { directory: string; name: string; company: CompanyDetails }): Promise<Client> {
    return this.on(this.replicas.primary).upsert(client);
  }

  list(): Promise<Client[]> {
    return this.on(this.replicas.primary).list();
  }
}
