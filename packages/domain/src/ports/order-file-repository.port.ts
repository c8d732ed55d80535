import type { NewOrderFile, OrderFile } from '../orders/order.js';

/** Rows of files attached to orders. */
export interface OrderFileRepositoryPort {
  /**
   * Inserts the row, or returns the existing one with the same `storageKey`
   * (so that a job that runs twice adds one row).
   */
  insertOnce(file: NewOrderFile): Promise<OrderFile>;
  findByStorageKey(storageKey: string): Promise<OrderFile | null>;
  listByOrder(directory: string, orderId: number): Promise<OrderFile[]>;
}
