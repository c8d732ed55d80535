import type { FileCategory } from '../orders/order.js';

/** File categories: one list shared by all clients. */
export interface FileCategoryRepositoryPort {
  list(): Promise<FileCategory[]>;
  findById(id: number): Promise<FileCategory | null>;
}
