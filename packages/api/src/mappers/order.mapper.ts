import type { FileCategory, Order } from '@logi/domain';

export function toOrderLookupDto(order: Order) {
  return { id: order.id, nr: order.nr, ownnr: order.ownnr };
}

export function toFileCategoryDto(category: FileCategory) {
  return { id: category.id, name: category.name, visible_customer: category.visibleCustomer };
}
