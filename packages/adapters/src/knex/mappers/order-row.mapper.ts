import type { Order } from '@logi/domain';
import { toNumber, toText } from './sql-values.js';

export const ORDER_COLUMNS = ['id', 'directory', 'nr', 'ownnr'] as const;
export type OrderRow = Record<(typeof ORDER_COLUMNS)[number], unknown>;

export function toOrder(row: OrderRow): Order {
  return {
    id: toNumber(row.id, 'orders.id'),
    directory: toText(row.directory, 'orders.directory'),
    nr: toText(row.nr, 'orders.nr'),
    ownnr: toText(row.ownnr, 'orders.ownnr'),
  };
}
