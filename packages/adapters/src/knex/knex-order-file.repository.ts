import type { Knex } from 'knex';
import type { NewOrderFile, OrderFile, OrderFileRepositoryPort } from '@logi/domain';
import { isUniqueViolation } from './db-errors.js';
import { ORDER_FILE_COLUMNS, toOrderFile, type OrderFileRow } from './mappers/order-file-row.mapper.js';

export class KnexOrderFileRepository implements OrderFileRepositoryPort {
  constructor(private readonly knex: Knex) {}

  async insertOnce(file: NewOrderFile): Promise<OrderFile> {
    const existing = await this.findByStorageKey(file.storageKey);
    if (existing) return existing;
    try {
      // Not INSERT IGNORE: on MariaDB it would also swallow a foreign key error as a warning.
      await this.knex('order_files').insert({
        directory: file.directory,
        order_id: file.orderId,
        category_id: file.categoryId,
        name: file.name,
        size: file.size,
        content_type: file.contentType,
        sha256: file.sha256,
        storage_key: file.storageKey,
        created_at: file.createdAt,
      });
    } catch (error) {
      // Another run of the same job inserted it in between: its row is the answer.
      if (!isUniqueViolation(error)) throw error;
    }
    const stored = await this.findByStorageKey(file.storageKey);
    if (!stored) throw new Error(`Order file ${file.storageKey} was not stored`);
    return stored;
  }

  async findByStorageKey(storageKey: string): Promise<OrderFile | null> {
    const row = (await this.knex('order_files').select(ORDER_FILE_COLUMNS).where({ storage_key: storageKey }).first()) as OrderFileRow | undefined;
    return row ? toOrderFile(row) : null;
  }

  async listByOrder(directory: string, orderId: number): Promise<OrderFile[]> {
    const rows = (await this.knex('order_files').select(ORDER_FILE_COLUMNS).where({ directory, order_id: orderId }).orderBy('id')) as OrderFileRow[];
    return rows.map(toOrderFile);
  }
}
