import type { InvoiceCriteria, InvoiceDetail, InvoicePage, InvoiceRepositoryPort } from '@logi/domain';
import { KnexInvoiceRepository } from '../knex-invoice.repository.js';
import type { ReadReplicas, ReadTarget } from './read-replicas.js';

/**
 * Invoices read where ReadReplicas sends reads now (the port only reads).
 * Each call runs on one database, so a list's count and page agree.
 */
export class ReplicaInvoiceRepository implements InvoiceRepositoryPort {
  private readonly on: (target: ReadTarget) => KnexInvoiceRepository;

  constructor(private readonly replicas: ReadReplicas) {
    this.on = replicas.each((knex) => new KnexInvoiceRepository(knex));
  }

  list(criteria: InvoiceCriteria): Promise<InvoicePage> {
    return this.replicas.read((target) => this.on(target).list(criteria));
  }

  exists(directory: string, id: number): Promise<boolean> {
    return this.replicas.read((target) => this.on(target).exists(directory, id));
  }

  findDetail(directory: string, id: number): Promise<InvoiceDetail | null> {
    return this.replicas.read((target) => this.on(target).findDetail(directory, id));
  }

  /**
   * Names the database and the epoch it was read in: a replica behind the
   * primary holds the same version numbers for older data, and what a
   * download printed is remembered under the version read before it (a
   * version from the primary must never vouch for a replica's older rows).
   * Epochs only grow, so the port's "never back to an earlier value" holds
   * as far as anyone compares (for equality).
   */
  dataVersion(directory: string): Promise<string> {
    return this.replicas.read(async (target, epoch) => `${target.name}@${epoch}:${await this.on(target).dataVersion(directory)}`);
  }
}
