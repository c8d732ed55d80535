import type { Knex } from 'knex';
import type { FileCategory, FileCategoryRepositoryPort } from '@logi/domain';
import { FILE_CATEGORY_COLUMNS, toFileCategory, type FileCategoryRow } from './mappers/file-category-row.mapper.js';

/** One list shared by all clients, so no directory here. */
export class KnexFileCategoryRepository implements FileCategoryRepositoryPort {
  constructor(private readonly knex: Knex) {}

  async list(): Promise<FileCategory[]> {
    const rows = (await this.knex('file_categories').select(FILE_CATEGORY_COLUMNS).orderBy('id')) as FileCategoryRow[];
    return rows.map(toFileCategory);
  }

  async findById(id: number): Promise<FileCategory | null> {
    const row = (await this.knex('file_categories').select(FILE_CATEGORY_COLUMNS).where({ id }).first()) as FileCategoryRow | undefined;
    return row ? toFileCategory(row) : null;
  }
}
