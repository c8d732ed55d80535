import type { Order, OrderRepositoryPort } from '@logi/domain';
import { KnexOrderRepository } from '../knex-order.repository.js';
import type { ReadReplicas, ReadTarget } from './read-replicas.js';

/**
 * Orders read where ReadReplicas sends reads now: for the by-nr lookup. The
 * upload's order check reads its own kind of write and keeps to the primary
 * (a KnexOrderRepository on DATABASE_URL).
 */
export class ReplicaOrderRepository implements OrderRepositoryPort {
  private readonly on: (target: ReadTarget) => KnexOrderRepository;

  constructor(private readonly replicas: ReadReplicas) {
    this.on = replicas.each((knex) => new KnexOrderRepository(knex));
  }

  findById(directory: string, id: number): Promise<Order | null> {
    return this.replicas.read((target) => this.on(target).findById(directory, id));
  }

  findFirstByNr(directory: string, fragment: string): Promise<Order | null> {
    return this.replicas.read((target) => this.on(target).findFirstByNr(directory, fragment));
  }
}
