import type { FileCategory } from '@logi/domain';
import { toNumber, toText } from './sql-values.js';

export const FILE_CATEGORY_COLUMNS = ['id', 'name', 'visible_customer'] as const;
export type FileCategoryRow = Record<(typeof FILE_CATEGORY_COLUMNS)[number], unknown>;

export function toFileCategory(row: FileCategoryRow): FileCategory {
  return {
    id: toNumber(row.id, 'file_categories.id'),
    name: toText(row.name, 'file_categories.name'),
    visibleCustomer: toNumber(row.visible_customer, 'file_categories.visible_customer'),
  };
}
