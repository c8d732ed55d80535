import type { Knex } from 'knex';
import type { InvoiceCriteria, InvoiceDateField, InvoiceSortField } from '@logi/domain';
import type { SqlDialect } from './sql-dialect.js';

/** Allow-lists: criteria name fields, and only these column names ever reach the SQL text. */
const DATE_COLUMNS: Record<InvoiceDateField, string> = {
  added_date: 'i.added_time',
  issue_date: 'i.issue_date',
  service_date: 'i.service_date',
  payment_term: 'i.payment_term',
  payment_date: 'i.payment_date',
};

const SORT_COLUMNS: Record<InvoiceSortField, { column: string; text: boolean }> = {
  issue_date: { column: 'i.issue_date', text: false },
  service_date: { column: 'i.service_date', text: false },
  payment_term: { column: 'i.payment_term', text: false },
  payment_date: { column: 'i.payment_date', text: false },
  nr: { column: 'i.nr', text: true },
  amount_gross: { column: 'i.amount_gross', text: false },
  amount_net: { column: 'i.amount_net', text: false },
  amount_tax: { column: 'i.amount_tax', text: false },
  customer_name: { column: 'i.customer_name', text: true },
  added_time: { column: 'i.added_time', text: false },
};

/**
 * What the trigram index allows: `ids` (a list the code read, intersected
 * over the text filters) and `within` (subqueries yielding ids, for
 * fragments made of common trigrams, with the pending documents that are
 * candidates besides), every one of them required. Either may be absent.
 */
export interface InvoiceCandidates {
  ids: number[] | null;
  within: Array<{ sql: string; bindings: number[]; pending: number[] }>;
}

/**
 * Adds every filter of the criteria to a query over `invoices as i` of one
 * directory. The search looks into related rows with EXISTS, so an invoice
 * with several matching orders or items still appears once.
 */
export function applyInvoiceFilters(
  query: Knex.QueryBuilder,
  criteria: InvoiceCriteria,
  dialect: SqlDialect,
  candidates: InvoiceCandidates | null = null,
): Knex.QueryBuilder {
  query.where('i.directory', criteria.directory);
  // The trigram index's candidates narrow the rows; the predicates below still decide.
  if (candidates?.ids) query.whereRaw(idsIn('i.id', candidates.ids));
  for (const within of candidates?.within ?? []) {
    const pending = within.pending.length > 0 ? ` OR ${idsIn('i.id', within.pending)}` : '';
    query.whereRaw(`(i.id IN (${within.sql})${pending})`, within.bindings);
  }

  if (criteria.types?.length) query.whereIn('i.type', criteria.types);
  if (criteria.statuses?.length) query.whereIn('i.status', criteria.statuses);
  if (criteria.branchIds?.length) query.whereIn('i.branch_id', criteria.branchIds);
  if (criteria.customerCountry) query.where('i.customer_country', criteria.customerCountry.toLowerCase());
  if (criteria.customerVats?.length) {
    const vats = dialect.equalsAny('i.customer_vat', criteria.customerVats);
    query.whereRaw(vats.sql, vats.bindings);
  }
  if (criteria.customerName) {
    const name = dialect.contains('i.customer_name', criteria.customerName);
    query.whereRaw(name.sql, name.bindings);
  }
  if (criteria.dateFilter) {
    const column = DATE_COLUMNS[criteria.dateFilter.field];
    const { from, toExclusive } = criteria.dateFilter.range;
    // An invoice without that date (unpaid, for payment_date) lies in no range.
    query.whereNotNull(column);
    if (from !== null) query.where(column, '>=', from);
    if (toExclusive !== null) query.where(column, '<', toExclusive);
  }
  if (criteria.search) applySearch(query, criteria.search, dialect, candidates !== null);
  return query;
}

/**
 * The search predicate. With candidates the rows to test are few, so each
 * one's orders and items are looked up by its id: written as scalar
 * subqueries, which MariaDB evaluates per row, because it turns EXISTS into
 * IN and may then materialize it, testing every item of every directory
 * (EXPLAIN at 100k invoices: `MATERIALIZED t ALL 100000` once an id list
 * passed 1,000 entries; 200 ms, 2 s at 1M). Without candidates the
 * optimizer is left to choose.
 */
function applySearch(query: Knex.QueryBuilder, search: string, dialect: SqlDialect, narrowed: boolean): void {
  const inNr = dialect.contains('i.nr', search);
  const inOrder = dialect.contains('o.nr', search);
  const inItem = dialect.contains('t.name', search);
  const related = (sql: string) => (narrowed ? `(${sql} LIMIT 1) IS NOT NULL` : `EXISTS (${sql})`);
  query.whereRaw(
    `(${inNr.sql}` +
      ` OR ${related(`SELECT 1 FROM invoice_orders o WHERE o.invoice_id = i.id AND ${inOrder.sql}`)}` +
      ` OR ${related(`SELECT 1 FROM invoice_items t WHERE t.invoice_id = i.id AND ${inItem.sql}`)})`,
    [...inNr.bindings, ...inOrder.bindings, ...inItem.bindings],
  );
}

/**
 * ORDER BY for the criteria: the field, then id in the same direction so that
 * pages never overlap. NULL is the smallest value in both databases already.
 */
export function invoiceOrderBy(criteria: InvoiceCriteria, dialect: SqlDialect, reversed = false): string {
  const sort = SORT_COLUMNS[criteria.sortBy];
  const direction = (criteria.sortDir === 'asc') !== reversed ? 'ASC' : 'DESC';
  const expression = sort.text ? dialect.textOrder(sort.column) : sort.column;
  return `${expression} ${direction}, i.id ${direction}`;
}

/**
 * `column IN (...)` over ids the code itself read from the database, written
 * inline (a list can be longer than a statement's placeholder limit).
 */
export function idsIn(column: string, ids: number[]): string {
  if (ids.length === 0) return '1 = 0';
  for (const id of ids) if (!Number.isSafeInteger(id)) throw new Error(`not an id: ${id}`);
  return `${column} IN (${ids.join(', ')})`;
}

/** Criteria whose total the kept name counts answer (`customer_name_counts`, migration 012): a customer name alone. */
export function nameCountsServe(criteria: InvoiceCriteria): boolean {
  return (
    Boolean(criteria.customerName) &&
    !criteria.search &&
    !criteria.dateFilter &&
    !criteria.customerVats?.length &&
    !criteria.types?.length &&
    !criteria.statuses?.length &&
    !criteria.branchIds?.length &&
    !criteria.customerCountry
  );
}

/** Criteria whose total the kept counts answer: only type, status, branch and country filters. */
export function countsServe(criteria: InvoiceCriteria): boolean {
  return !criteria.dateFilter && !criteria.customerVats?.length && !criteria.customerName && !criteria.search;
}
