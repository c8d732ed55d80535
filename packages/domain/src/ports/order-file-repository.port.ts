import type { NewOrderFile, OrderFile } from '../orders/order.js';

/** Rows of files attached to orders. */
export interface OrderFileRepositoryPort {
  /**
   * Inserts the row, or returns the existing one with the same `storageKey`
   * (so that a job that runs twice adds one row). The insert commits only
   * while `deadline` (Unix ms) has not passed; past it nothing is written and
   * the answer is null, since the caller has stopped waiting for this row.
   */
  insertOnce(file: NewOrderFile, deadline: number): Promise<OrderFile | null>;
  findByStorageKey(storageKey: string): Promise<OrderFile | null>;
  /** The order's files, oldest (lowest id) first. */
  listByOrder(directory: string, orderId: number): Promise<OrderFile[]>;
  /** One file of the directory; another directory's file is null. */
  findById(directory: string, id: number): Promise<OrderFile | null>;
  /**
   * Which of `storageKeys` (any number) a row points at, compared exactly.
   * Throws when the database does not answer: never an empty answer then.
   */
  keysWithRows(storageKeys: readonly string[]): Promise<Set<string>>;
}
