import type { FileCategory, Order, OrderFile } from '@logi/domain';

export function toOrderLookupDto(order: Order) {
  return { id: order.id, nr: order.nr, ownnr: order.ownnr };
}

export function toFileCategoryDto(category: FileCategory) {
  return { id: category.id, name: category.name, visible_customer: category.visibleCustomer };
}

export function toOrderFileDto(file: OrderFile) {
  return {
    id: file.id,
    name: file.name,
    category_id: file.categoryId,
    size: file.size,
    content_type: file.contentType,
    sha256: file.sha256,
    created: file.createdAt,
  };
}
