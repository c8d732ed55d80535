export interface Order {
  id: number;
  directory: string;
  nr: string;
  ownnr: string;
}

export interface FileCategory {
  id: number;
  name: string;
  visibleCustomer: number;
}

/** A file attached to an order: one database row plus one object in storage. */
export interface OrderFile {
  id: number;
  directory: string;
  orderId: number;
  categoryId: number | null;
  name: string;
  size: number;
  contentType: string;
  sha256: string;
  storageKey: string;
  createdAt: number;
}

export type NewOrderFile = Omit<OrderFile, 'id'>;
