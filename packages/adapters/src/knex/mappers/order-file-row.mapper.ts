import type { OrderFile } from '@logi/domain';
import { toNullableNumber, toNumber, toText } from './sql-values.js';

export const ORDER_FILE_COLUMNS = [
  'id',
  'directory',
  'order_id',
  'category_id',
  'name',
  'size',
  'content_type',
  'sha256',
  'storage_key',
  'created_at',
] as const;
export type OrderFileRow = Record<(typeof ORDER_FILE_COLUMNS)[number], unknown>;

export function toOrderFile(row: OrderFileRow): OrderFile {
  return {
    id: toNumber(row.id, 'order_files.id'),
    directory: toText(row.directory, 'order_files.directory'),
    orderId: toNumber(row.order_id, 'order_files.order_id'),
    categoryId: toNullableNumber(row.category_id, 'order_files.category_id'),
    name: toText(row.name, 'order_files.name'),
    size: toNumber(row.size, 'order_files.size'),
    contentType: toText(row.content_type, 'order_files.content_type'),
    sha256: toText(row.sha256, 'order_files.sha256'),
    storageKey: toText(row.storage_key, 'order_files.storage_key'),
    createdAt: toNumber(row.created_at, 'order_files.created_at'),
  };
}
