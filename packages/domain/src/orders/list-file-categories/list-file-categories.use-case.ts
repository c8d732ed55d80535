import type { FileCategoryRepositoryPort } from '../../ports/file-category-repository.port.js';
import type { FileCategory } from '../order.js';

/** GET /orders/file-categories: one list shared by all clients. */
export class ListFileCategoriesUseCase {
  constructor(private readonly deps: { categories: FileCategoryRepositoryPort }) {}

  execute(): Promise<FileCategory[]> {
    return this.deps.categories.list();
  }
}
