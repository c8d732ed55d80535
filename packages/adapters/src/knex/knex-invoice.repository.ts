import type { Knex } from 'knex';
import type { Invoice, InvoiceCriteria, InvoiceDetail, InvoiceOrder, InvoicePage, InvoiceRepositoryPort } from '@logi/domain';
import { applyInvoiceFilters, countsServe, idsIn, invoiceOrderBy, nameCountsServe, type InvoiceCandidates } from './invoice-list.query.js';
import { LRUCache } from 'lru-cache';
import { SEARCH_KINDS } from './search/search-text.js';
import { trigramCandidateFilter } from './search/trigram-index.js';
import {
  INVOICE_COLUMNS,
  INVOICE_ITEM_COLUMNS,
  INVOICE_ORDER_COLUMNS,
  NATIONAL_COLUMNS,
  toInvoice,
  toInvoiceItem,
  toInvoiceOrder,
  toNationalFields,
  type InvoiceItemRow,
  type InvoiceOrderRow,
  type InvoiceRow,
  type NationalRow,
} from './mappers/invoice-row.mapper.js';
import { dialectOf, isMysql, type SqlDialect } from './sql-dialect.js';

/** Up to this many listed candidates a page reads them all whatever their share (cheaper than checking it). */
const FEW_CANDIDATES = 1_000;

/** How many totals one process remembers (a few hundred bytes each). */
const TOTALS_CACHED = 2_000;

export class KnexInvoiceRepository implements InvoiceRepositoryPort {
  private readonly dialect: SqlDialect;
  /** Totals by directory data version and filters; a write bumps the version, so an entry is never stale. */
  private readonly totals = new LRUCache<string, number>({ max: TOTALS_CACHED });

  constructor(
    private readonly knex: Knex,
    /** `postingsCap`: the trigram index's cap (search/trigram-index.ts); tests lower it to reach the common-fragment paths with little data. */
    private readonly options: { postingsCap?: number } = {},
  ) {
    this.dialect = dialectOf(knex);
  }

  async list(criteria: InvoiceCriteria): Promise<InvoicePage> {
    const offset = (criteria.page - 1) * criteria.perPage;
    // A customer name alone is counted from the kept counts first, so that a dense one skips the
    // index: its page walks the sort index, and its candidates would only be read to be dropped.
    const keptTotal = nameCountsServe(criteria) ? await this.nameTotal(criteria) : null;
    const walk =
      keptTotal !== null && offset < keptTotal && (await this.walkBeats(criteria.directory, keptTotal, Math.min(keptTotal, offset + criteria.perPage)));
    const candidates = walk ? null : await this.candidatesOf(criteria);
    const total = keptTotal ?? (await this.total(criteria, candidates));
    if (offset >= total) return { invoices: [], total };

    // Deferred join: the page's ids come from the sort index alone, then only those rows are read.
    // A page past the middle is read from the other end of the same index (fewer entries to skip).
    const size = Math.min(criteria.perPage, total - offset);
    const reversed = offset + size / 2 > total / 2;
    // A kept name total has already decided between walking and reading the candidates, for this same page.
    const pageCandidates = keptTotal !== null ? candidates : await this.pageCandidates(criteria, candidates, total, offset + size);
    const idRows = (await this.pageQuery(criteria, pageCandidates, total)
      .select('i.id')
      .orderByRaw(invoiceOrderBy(criteria, this.dialect, reversed))
      .limit(size)
      .offset(reversed ? total - offset - size : offset)) as Array<{ id: unknown }>;
    const ids = idRows.map((row) => Number(row.id));
    if (reversed) ids.reverse();
    if (ids.length === 0) return { invoices: [], total };

    const [rows, orders] = await Promise.all([
      this.withCorrectOf(this.knex('invoices as i').whereRaw(idsIn('i.id', ids))) as Promise<InvoiceRow[]>,
      this.ordersOf(ids),
    ]);
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    const invoices = ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [toInvoice(row, orders.get(id) ?? [])] : [];
    });
    return { invoices, total };
  }

  /**
   * What the trigram index allows for the text filters (`search`,
   * `customer_name`): id lists intersected, subqueries kept for the
   * database; null when no text filter can be narrowed that way (none given,
   * or a fragment the index cannot serve).
   */
  private async candidatesOf(criteria: InvoiceCriteria): Promise<InvoiceCandidates | null> {
    const lists: number[][] = [];
    const within: InvoiceCandidates['within'] = [];
    for (const [kind, text] of [
      [SEARCH_KINDS.invoiceText, criteria.search],
      [SEARCH_KINDS.customerName, criteria.customerName],
    ] as const) {
      if (!text) continue;
      // A common name fragment is counted from the customer-name index alone (covering, a million entries
      // in about half a second), cheaper than joining its long posting lists; items and orders have no
      // such index, so a common search fragment is joined in the database.
      const found = await trigramCandidateFilter(this.knex, kind, criteria.directory, text, {
        cap: this.options.postingsCap,
        common: kind === SEARCH_KINDS.invoiceText ? 'subquery' : 'scan',
      });
      if (!found) continue;
      if ('ids' in found) lists.push(found.ids);
      else within.push(found);
    }
    if (lists.length === 0 && within.length === 0) return null;
    const ids =
      lists.length === 0
        ? null
        : lists.reduce((kept, next) => {
            const allowed = new Set(next);
            return kept.filter((id) => allowed.has(id));
          });
    return { ids, within };
  }

  /**
   * The query of a page's ids, before its order and slice. When the total
   * equals the number of listed candidates, every candidate matches every
   * filter (the total counts the candidates that do), so the page only
   * orders the candidates: no predicate is tested again (at a million
   * invoices, 7,824 candidates of `Gdańsk–Berlin`: 42 ms instead of 128 ms).
   */
  private pageQuery(criteria: InvoiceCriteria, candidates: InvoiceCandidates | null, total: number): Knex.QueryBuilder {
    // A few listed candidates are read by id and sorted: MariaDB's estimate otherwise walks a sort
    // index for them (at 10k, 112 candidates of `000012`: 5,772 rows walked, 15 ms against 3 ms).
    const few = candidates?.ids && candidates.within.length === 0 && candidates.ids.length <= FEW_CANDIDATES && isMysql(this.knex);
    const invoices: Knex.QueryBuilder = few ? this.knex.from(this.knex.raw('`invoices` AS `i` FORCE INDEX (PRIMARY)')) : this.knex('invoices as i');
    if (candidates?.ids && candidates.within.length === 0 && candidates.ids.length === total) {
      return invoices.where('i.directory', criteria.directory).whereRaw(idsIn('i.id', candidates.ids));
    }
    return applyInvoiceFilters(invoices, criteria, this.dialect, candidates);
  }

  /**
   * The candidates a page query uses. Many candidates (a long id list, or a
   * subquery joining long posting lists) pay off while matches are rare;
   * when they are dense the page is found sooner by walking the sort index
   * and testing each invoice, as without candidates, than by reading and
   * sorting every match (`Cargo` at 100k, 19,977 ids: 90 to 105 ms).
   */
  private async pageCandidates(
    criteria: InvoiceCriteria,
    candidates: InvoiceCandidates | null,
    total: number,
    pageEnd: number,
  ): Promise<InvoiceCandidates | null> {
    if (!candidates || (candidates.within.length === 0 && (candidates.ids?.length ?? 0) <= FEW_CANDIDATES)) return candidates;
    return (await this.walkBeats(criteria.directory, total, pageEnd)) ? null : candidates;
  }

  /**
   * Whether walking the sort index finds a page sooner than reading its
   * `total` matches: reading them costs about one row each, walking about
   * one row per invoice up to the page's end (pageEnd × directory / total),
   * so the walk wins once total² reaches pageEnd × directory.
   */
  private async walkBeats(directory: string, total: number, pageEnd: number): Promise<boolean> {
    const row = (await this.knex('invoice_counts').sum({ n: 'n' }).where('directory', directory).first()) as { n: unknown } | undefined;
    return total * total >= pageEnd * Number(row?.n ?? 0);
  }

  /** The directory's data version, bumped by triggers on every write (migrations 003 and 007); "0" before the first. */
  async dataVersion(directory: string): Promise<string> {
    const row = (await this.knex('directory_versions').select('version').where('directory', directory).first()) as { version: unknown } | undefined;
    return String(row?.version ?? 0);
  }

  /**
   * The exact number of matches. Type, status, branch and country filters alone are
   * summed from the kept counts (a customer name alone: nameTotal); anything else is counted once per directory
   * data version (which every write bumps, through triggers) and remembered.
   */
  private async total(criteria: InvoiceCriteria, candidates: InvoiceCandidates | null): Promise<number> {
    if (candidates === null && countsServe(criteria)) {
      const query = this.knex('invoice_counts').sum({ total: 'n' }).where('directory', criteria.directory);
      if (criteria.types?.length) query.whereIn('type', criteria.types);
      if (criteria.statuses?.length) query.whereIn('status', criteria.statuses);
      if (criteria.branchIds?.length) query.whereIn('branch_id', criteria.branchIds);
      if (criteria.customerCountry) query.where('customer_country', criteria.customerCountry.toLowerCase());
      const row = (await query.first()) as { total: unknown } | undefined;
      return Number(row?.total ?? 0);
    }
    const { page: _page, perPage: _perPage, sortBy: _sortBy, sortDir: _sortDir, ...filters } = criteria;
    const key = `${await this.dataVersion(criteria.directory)}\u0000${JSON.stringify(filters)}`;
    const cached = this.totals.get(key);
    if (cached !== undefined) return cached;
    const counted = (await applyInvoiceFilters(this.knex('invoices as i'), criteria, this.dialect, candidates).count({ total: '*' }).first()) as
      { total: unknown } | undefined;
    const total = Number(counted?.total ?? 0);
    this.totals.set(key, total);
    return total;
  }

  /**
   * The total of a customer-name filter alone (nameCountsServe), summed over the directory's
   * distinct names that match, with the invoices' own predicate (MariaDB: in their collation; the
   * kept names are stored byte for byte).
   */
  private async nameTotal(criteria: InvoiceCriteria): Promise<number> {
    const column = isMysql(this.knex) ? 'customer_name COLLATE utf8mb4_unicode_ci' : 'customer_name';
    const name = this.dialect.contains(column, criteria.customerName!);
    const row = (await this.knex('customer_name_counts')
      .sum({ total: 'n' })
      .where('directory', criteria.directory)
      .whereRaw(name.sql, name.bindings)
      .first()) as { total: unknown } | undefined;
    return Number(row?.total ?? 0);
  }

  async exists(directory: string, id: number): Promise<boolean> {
    return (await this.knex('invoices').select('id').where({ directory, id }).first()) !== undefined;
  }

  async findDetail(directory: string, id: number): Promise<InvoiceDetail | null> {
    const row = (await this.withCorrectOf(this.knex('invoices as i').where({ 'i.directory': directory, 'i.id': id }))
      .select([
        'i.customer_address',
        ...NATIONAL_COLUMNS.map((column) => `i.${column}`),
        'ci.issue_date as correct_of_issue_date',
        'ci.ksef_number as correct_of_ksef_number',
      ])
      .first()) as (InvoiceRow & NationalRow & { customer_address: unknown }) | undefined;
    if (!row) return null;
    const [orders, itemRows] = await Promise.all([
      this.ordersOf([id]),
      this.knex('invoice_items').select(INVOICE_ITEM_COLUMNS).where({ invoice_id: id }).orderBy('position') as Promise<InvoiceItemRow[]>,
    ]);
    const invoice: Invoice = toInvoice(row, orders.get(id) ?? []);
    return { ...invoice, customerAddress: String(row.customer_address), items: itemRows.map(toInvoiceItem), ...toNationalFields(row) };
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
