import type { Order } from '../orders/order.js';

/** Orders of one directory; ids of another directory behave as missing. */
export interface OrderRepositoryPort {
  findById(directory: string, id: number): Promise<Order | null>;
  /**
   * The first order whose nr contains `fragment` (literal, case-insensitive, Unicode-aware):
   * an exact case-insensitive match wins, else the lowest id.
   */
  findFirstByNr(directory: string, fragment: string): Promise<Order | null>;
}
