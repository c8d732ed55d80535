import type { Knex } from 'knex';
import type { Invoice, InvoiceCriteria, InvoiceDetail, InvoiceOrder, InvoicePage, InvoiceRepositoryPort } from '@logi/domain';
import { applyInvoiceFilters, invoiceOrderBy } from './invoice-list.query.js';
import {
  INVOICE_COLUMNS,
  INVOICE_ITEM_COLUMNS,
  INVOICE_ORDER_COLUMNS,
  toInvoice,
  toInvoiceItem,
  toInvoiceOrder,
  type InvoiceItemRow,
  type InvoiceOrderRow,
  type InvoiceRow,
} from './mappers/invoice-row.mapper.js';
import { dialectOf, type SqlDialect } from './sql-dialect.js';

export class KnexInvoiceRepository implements InvoiceRepositoryPort {
  private readonly dialect: SqlDialect;

  constructor(private readonly knex: Knex) {
    this.dialect = dialectOf(knex);
  }

  async list(criteria: InvoiceCriteria): Promise<InvoicePage> {
    const filtered = () => applyInvoiceFilters(this.knex('invoices as i'), criteria, this.dialect);
    const counted = (await filtered().count({ total: '*' }).first()) as { total: unknown } | undefined;
    const total = Number(counted?.total ?? 0);
    const offset = (criteria.page - 1) * criteria.perPage;
    if (offset >= total) return { invoices: [], total };

    const rows = (await this.withCorrectOf(filtered())
      .orderByRaw(invoiceOrderBy(criteria, this.dialect))
      .limit(criteria.perPage)
      .offset(offset)) as InvoiceRow[];
    const orders = await this.ordersOf(rows.map((row) => Number(row.id)));
    return { invoices: rows.map((row) => toInvoice(row, orders.get(Number(row.id)) ?? [])), total };
  }

  async exists(directory: string, id: number): Promise<boolean> {
    return (await this.knex('invoices').select('id').where({ directory, id }).first()) !== undefined;
  }

  async findDetail(directory: string, id: number): Promise<InvoiceDetail | null> {
    const row = (await this.withCorrectOf(this.knex('invoices as i').where({ 'i.directory': directory, 'i.id': id }))
      .select('i.customer_address')
      .first()) as (InvoiceRow & { customer_address: unknown }) | undefined;
    if (!row) return null;
    const [orders, itemRows] = await Promise.all([
      this.ordersOf([id]),
      this.knex('invoice_items').select(INVOICE_ITEM_COLUMNS).where({ invoice_id: id }).orderBy('position') as Promise<InvoiceItemRow[]>,
    ]);
    const invoice: Invoice = toInvoice(row, orders.get(id) ?? []);
    return { ...invoice, customerAddress: String(row.customer_address), items: itemRows.map(toInvoiceItem) };
  }

  /** The invoice columns plus the corrected invoice's id and nr, looked up within the same directory. */
  private withCorrectOf(query: Knex.QueryBuilder): Knex.QueryBuilder {
    return query
      .leftJoin('invoices as ci', (join) => {
        join.on('ci.id', '=', 'i.correct_of_id').andOn('ci.directory', '=', 'i.directory');
      })
      .select([...INVOICE_COLUMNS.map((column) => `i.${column}`), 'ci.id as correct_of_ref_id', 'ci.nr as correct_of_nr']);
  }

  /** The related orders of a page of invoices, in one query (no N+1). */
  private async ordersOf(invoiceIds: number[]): Promise<Map<number, InvoiceOrder[]>> {
    const byInvoice = new Map<number, InvoiceOrder[]>();
    if (invoiceIds.length === 0) return byInvoice;
    const rows = (await this.knex('invoice_orders')
      .select(INVOICE_ORDER_COLUMNS)
      .whereIn('invoice_id', invoiceIds)
      .orderBy([{ column: 'invoice_id' }, { column: 'position' }])) as InvoiceOrderRow[];
    for (const row of rows) {
      const invoiceId = Number(row.invoice_id);
      const list = byInvoice.get(invoiceId) ?? [];
      list.push(toInvoiceOrder(row));
      byInvoice.set(invoiceId, list);
    }
    return byInvoice;
  }
}
