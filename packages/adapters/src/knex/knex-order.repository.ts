import type { Knex } from 'knex';
import type { Order, OrderRepositoryPort } from '@logi/domain';
import { ORDER_COLUMNS, toOrder, type OrderRow } from './mappers/order-row.mapper.js';
import { dialectOf, type SqlDialect } from './sql-dialect.js';

export class KnexOrderRepository implements OrderRepositoryPort {
  private readonly dialect: SqlDialect;

  constructor(private readonly knex: Knex) {
    this.dialect = dialectOf(knex);
  }

  async findById(directory: string, id: number): Promise<Order | null> {
    const row = (await this.knex('orders').select(ORDER_COLUMNS).where({ directory, id }).first()) as OrderRow | undefined;
    return row ? toOrder(row) : null;
  }

  async findFirstByNr(directory: string, fragment: string): Promise<Order | null> {
    const contains = this.dialect.contains('nr', fragment);
    const exact = this.dialect.equals('nr', fragment);
    const row = (await this.knex('orders')
      .select(ORDER_COLUMNS)
      .where({ directory })
      .whereRaw(contains.sql, contains.bindings)
      // An exact (case-insensitive) match wins over a mere substring, then the oldest order.
      .orderByRaw(`CASE WHEN ${exact.sql} THEN 0 ELSE 1 END, id ASC`, exact.bindings)
      .first()) as OrderRow | undefined;
    return row ? toOrder(row) : null;
  }
}
