import type { Knex } from 'knex';
import type { Order, OrderRepositoryPort } from '@logi/domain';
import { ORDER_COLUMNS, toOrder, type OrderRow } from './mappers/order-row.mapper.js';
import { dialectOf, type SqlDialect } from './sql-dialect.js';
import { idsIn } from './invoice-list.query.js';
import { SEARCH_KINDS } from './search/search-text.js';
import { trigramCandidates } from './search/trigram-index.js';

/** Candidate ids per query when looking for the first order that matches. */
const CANDIDATES_PER_TRY = 500;

export class KnexOrderRepository implements OrderRepositoryPort {
  private readonly dialect: SqlDialect;

  constructor(
    private readonly knex: Knex,
    /** `postingsCap`: the trigram index's cap (search/trigram-index.ts); tests lower it to reach the common-fragment paths with little data. */
    private readonly options: { postingsCap?: number } = {},
  ) {
    this.dialect = dialectOf(knex);
  }

  async findById(directory: string, id: number): Promise<Order | null> {
    const row = (await this.knex('orders').select(ORDER_COLUMNS).where({ directory, id }).first()) as OrderRow | undefined;
    return row ? toOrder(row) : null;
  }

  async findFirstByNr(directory: string, fragment: string): Promise<Order | null> {
    // An exact (case-insensitive) match wins over a mere substring, then the oldest order.
    const exact = this.dialect.equals('nr', fragment);
    const contains = this.dialect.contains('nr', fragment);
    const exactRow = (await this.knex('orders')
      .select(ORDER_COLUMNS)
      .where({ directory })
      .whereRaw(exact.sql, exact.bindings)
      .whereRaw(contains.sql, contains.bindings)
      .orderBy('id')
      .first()) as OrderRow | undefined;
    if (exactRow) return toOrder(exactRow);
    const firstMatch = async (ids: number[] | null) => {
      const query = this.knex('orders').select(ORDER_COLUMNS).where({ directory }).whereRaw(contains.sql, contains.bindings);
      if (ids) query.whereRaw(idsIn('id', ids));
      return (await query.orderBy('id').first()) as OrderRow | undefined;
    };
    const candidates = await trigramCandidates(this.knex, SEARCH_KINDS.orderNr, directory, fragment, this.options.postingsCap);
    if (!candidates) {
      const row = await firstMatch(null);
      return row ? toOrder(row) : null;
    }
    // Only the lowest matching id is wanted: candidates are tried in id order, a slice at a time.
    const ids = [...candidates.ids].sort((a, b) => a - b);
    for (let start = 0; start < ids.length; start += CANDIDATES_PER_TRY) {
      const row = await firstMatch(ids.slice(start, start + CANDIDATES_PER_TRY));
      if (row) return toOrder(row);
    }
    return null;
  }
}
