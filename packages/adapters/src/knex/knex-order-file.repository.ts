import type { Knex } from 'knex';
import type { NewOrderFile, OrderFile, OrderFileRepositoryPort } from '@logi/domain';
import { isUniqueViolation } from './db-errors.js';
import { ORDER_FILE_COLUMNS, toOrderFile, type OrderFileRow } from './mappers/order-file-row.mapper.js';
import { toNumber } from './mappers/sql-values.js';

export class KnexOrderFileRepository implements OrderFileRepositoryPort {
  constructor(private readonly knex: Knex) {}

  /**
   * One transaction of an INSERT, the deadline's check and the COMMIT: three round trips on a store job's path. A row
   * already there (another run of the job) is found by the unique key's violation, not looked up first.
   */
  async insertOnce(file: NewOrderFile, deadline: number): Promise<OrderFile | null> {
    try {
      return await this.knex.transaction(async (trx) => {
        // Not INSERT IGNORE: on MariaDB it would also swallow a foreign key error as a warning.
        const [id] = (await trx('order_files').insert({
          directory: file.directory,
          order_id: file.orderId,
          category_id: file.categoryId,
          name: file.name,
          size: file.size,
          content_type: file.contentType,
          sha256: file.sha256,
          storage_key: file.storageKey,
          created_at: file.createdAt,
        })) as unknown[];
        // Checked before the commit: a row that would land after the caller gave up is never written.
        if (Date.now() > deadline) throw new TooLate();
        return { ...file, id: toNumber(id, 'order_files.id') };
      });
    } catch (error) {
      if (error instanceof TooLate) return null;
      // Another run of the same job inserted it before: its row is the answer.
      if (!isUniqueViolation(error)) throw error;
    }
    const stored = await this.findByStorageKey(file.storageKey);
    if (!stored) throw new Error(`Order file ${file.storageKey} was not stored`);
    return stored;
  }

  async findByStorageKey(storageKey: string, db: Knex = this.knex): Promise<OrderFile | null> {
    const row = (await db('order_files').select(ORDER_FILE_COLUMNS).where({ storage_key: storageKey }).first()) as OrderFileRow | undefined;
    return row ? toOrderFile(row) : null;
  }

  async listByOrder(directory: string, orderId: number): Promise<OrderFile[]> {
    const rows = (await this.knex('order_files').select(ORDER_FILE_COLUMNS).where({ directory, order_id: orderId }).orderBy('id')) as OrderFileRow[];
    return rows.map(toOrderFile);
  }

  async findById(directory: string, id: number): Promise<OrderFile | null> {
    const row = (await this.knex('order_files').select(ORDER_FILE_COLUMNS).where({ directory, id }).first()) as OrderFileRow | undefined;
    return row ? toOrderFile(row) : null;
  }

  /** A query per chunk of keys (SQLite and MariaDB bound the parameters of one statement), each served by the unique index. */
  async keysWithRows(storageKeys: readonly string[]): Promise<Set<string>> {
    const wanted = new Set(storageKeys);
    const found = new Set<string>();
    const unique = [...wanted];
    for (let start = 0; start < unique.length; start += KEYS_PER_QUERY) {
      const rows = (await this.knex('order_files')
        .select('storage_key')
        .whereIn('storage_key', unique.slice(start, start + KEYS_PER_QUERY))) as Array<{ storage_key: unknown }>;
      // The column compares bytes (utf8mb4_bin), and only keys asked about are answered.
      for (const row of rows) if (typeof row.storage_key === 'string' && wanted.has(row.storage_key)) found.add(row.storage_key);
    }
    return found;
  }
}

/** Keys per `IN (...)` list: well under SQLite's parameter limit, and a short statement on MariaDB. */
const KEYS_PER_QUERY = 500;

/** Rolls the insert back: the deadline passed before the commit. */
class TooLate extends Error {}
