import type { Knex } from 'knex';
import type { ApiProcess } from './api-process.js';
import type { HttpAnswer } from './http.js';
import { log, percentile } from './progress.js';

/** What a query needs to know about its database (read once, before timing). */
export interface QueryContext {
  totalPages: number;
  /** The VAT of an invoice that exists (same at every size: rows are functions of their number). */
  vat: string;
  /** The nr of an order that exists. */
  exactOrderNr: string;
  /** Last month, first and last day (YYYY-MM-DD). */
  monthFrom: string;
  monthTo: string;
}

type Expect = 'hit' | 'miss' | 'any' | 'nonempty-page' | 'order-hit' | 'order-exact' | 'order-miss';

export interface QueryDef {
  id: string;
  /** As printed in the report. */
  label: string;
  group: 'page' | 'filter' | 'sort' | 'search' | 'by-nr' | 'combined';
  path: (ctx: QueryContext) => string;
  expect: Expect;
}

/** Fragments chosen to hit at every size (rows are functions of their number). */
export const FRAGMENTS = {
  /** Invoice nrs FV/m/yyyy/001230 … 001239: 10 invoices at every size. */
  invoiceNr: '/00123',
  /** Order nrs ORD/yyyy/0000012 and …/0000120-129 (and invoice nr …/000012): 11 invoices. */
  orderNr: '000012',
  /** One route of 132: about 0.76 % of the invoices. */
  itemText: 'Gdańsk–Berlin',
  /** A trigram the index has never seen: a miss the index answers alone. */
  miss: 'XQZ-4049',
  /** Every trigram common, never together (item numbers stop at 999): the index's worst case. */
  missCommon: 'Berlin 1000',
  /** Customers named Cargo … and Eurocargo …: about a quarter of the invoices. */
  customerName: 'Cargo',
  /** by-nr: a fragment of several order nrs; the lowest id wins. */
  byNrFragment: '000012',
  byNrMiss: 'ORD/1999/0000001',
  /** Eight zeros: every trigram in most order nrs, the fragment in none (nrs have 7 digits). */
  byNrMissCommon: 'ORD/2025/00000000',
};

const SORT_FIELDS = [
  'issue_date',
  'service_date',
  'payment_term',
  'payment_date',
  'nr',
  'amount_gross',
  'amount_net',
  'amount_tax',
  'customer_name',
  'added_time',
];

function list(params: Record<string, string>): string {
  return `/v1/invoices?${new URLSearchParams({ per_page: '250', ...params }).toString()}`;
}

export const QUERIES: QueryDef[] = [
  { id: 'default', label: 'default page', group: 'page', path: () => list({}), expect: 'nonempty-page' },
  { id: 'per-page-500', label: 'per_page=500', group: 'page', path: () => list({ per_page: '500' }), expect: 'nonempty-page' },
  { id: 'last-page', label: 'last page', group: 'page', path: (c) => list({ page: String(c.totalPages) }), expect: 'nonempty-page' },
  { id: 'period-90', label: 'period=last_90_days', group: 'filter', path: () => list({ period: 'last_90_days' }), expect: 'hit' },
  {
    id: 'period-custom',
    label: 'period=custom (one month)',
    group: 'filter',
    path: (c) => list({ period: 'custom', date_from: c.monthFrom, date_to: c.monthTo }),
    expect: 'hit',
  },
  { id: 'types-c', label: 'types=c', group: 'filter', path: () => list({ types: 'c' }), expect: 'hit' },
  { id: 'statuses-overdue', label: 'statuses=overdue', group: 'filter', path: () => list({ statuses: 'overdue' }), expect: 'hit' },
  { id: 'branch-3', label: 'branch_ids=3', group: 'filter', path: () => list({ branch_ids: '3' }), expect: 'hit' },
  { id: 'vat', label: 'customer_vats=<one VAT>', group: 'filter', path: (c) => list({ customer_vats: c.vat }), expect: 'hit' },
  { id: 'country-de', label: 'customer_country=de', group: 'filter', path: () => list({ customer_country: 'de' }), expect: 'hit' },
  {
    id: 'customer-name',
    label: `customer_name=${FRAGMENTS.customerName}`,
    group: 'filter',
    path: () => list({ customer_name: FRAGMENTS.customerName }),
    expect: 'hit',
  },
  ...SORT_FIELDS.map((field): QueryDef => ({
    id: `sort-${field}`,
    label: `sort_by=${field} asc`,
    group: 'sort',
    path: () => list({ sort_by: field, sort_dir: 'asc' }),
    expect: 'nonempty-page',
  })),
  {
    id: 'search-invoice-nr',
    label: `search=${FRAGMENTS.invoiceNr} (invoice nr)`,
    group: 'search',
    path: () => list({ search: FRAGMENTS.invoiceNr }),
    expect: 'hit',
  },
  { id: 'search-order-nr', label: `search=${FRAGMENTS.orderNr} (order nr)`, group: 'search', path: () => list({ search: FRAGMENTS.orderNr }), expect: 'hit' },
  { id: 'search-item', label: `search=${FRAGMENTS.itemText} (item text)`, group: 'search', path: () => list({ search: FRAGMENTS.itemText }), expect: 'hit' },
  { id: 'search-miss', label: `search=${FRAGMENTS.miss} (miss)`, group: 'search', path: () => list({ search: FRAGMENTS.miss }), expect: 'miss' },
  {
    id: 'search-miss-common',
    label: `search=${FRAGMENTS.missCommon} (miss, common trigrams)`,
    group: 'search',
    path: () => list({ search: FRAGMENTS.missCommon }),
    expect: 'miss',
  },
  { id: 'by-nr-fragment', label: `by-nr ${FRAGMENTS.byNrFragment} (fragment)`, group: 'by-nr', path: () => byNr(FRAGMENTS.byNrFragment), expect: 'order-hit' },
  { id: 'by-nr-exact', label: 'by-nr exact nr', group: 'by-nr', path: (c) => byNr(c.exactOrderNr), expect: 'order-exact' },
  { id: 'by-nr-miss', label: `by-nr ${FRAGMENTS.byNrMiss} (miss)`, group: 'by-nr', path: () => byNr(FRAGMENTS.byNrMiss), expect: 'order-miss' },
  {
    id: 'by-nr-miss-common',
    label: `by-nr ${FRAGMENTS.byNrMissCommon} (miss, common trigrams)`,
    group: 'by-nr',
    path: () => byNr(FRAGMENTS.byNrMissCommon),
    expect: 'order-miss',
  },
  {
    id: 'combined-types-statuses-nr',
    label: 'types=s,c&statuses=issued,paid&sort_by=nr',
    group: 'combined',
    path: () => list({ types: 's,c', statuses: 'issued,paid', sort_by: 'nr' }),
    expect: 'hit',
  },
  {
    id: 'amount-gross-page-20',
    label: 'sort_by=amount_gross&page=20',
    group: 'combined',
    path: () => list({ sort_by: 'amount_gross', page: '20' }),
    expect: 'nonempty-page',
  },
];

function byNr(nr: string): string {
  return `/v1/orders/by-nr?${new URLSearchParams({ nr }).toString()}`;
}

interface Envelope {
  status: number;
  message: string;
  data: unknown;
}
interface ListData {
  invoices: Array<{ id: number; nr: string }>;
  pagination: { page: number; per_page: number; total: number; total_pages: number };
}

/** Checks an answer as the query expects it; returns the number of rows it matched. Throws on anything else. */
export function checkAnswer(def: QueryDef, ctx: QueryContext, where: string, answer: HttpAnswer): number {
  const path = def.path(ctx);
  const fail = (why: string): never => {
    throw new Error(`${where}: GET ${path}: ${why}\n${answer.body.toString('utf8').slice(0, 600)}`);
  };
  const expectedStatus = def.expect === 'order-miss' ? 404 : 200;
  if (answer.status !== expectedStatus) fail(`status ${answer.status}, expected ${expectedStatus}`);
  let body: Envelope;
  try {
    body = JSON.parse(answer.body.toString('utf8')) as Envelope;
  } catch (error) {
    return fail(`not JSON (${(error as Error).message})`);
  }
  if (body.status !== expectedStatus) fail(`envelope status ${body.status}`);
  if (def.group === 'by-nr') {
    if (def.expect === 'order-miss') return 0;
    const order = body.data as { id: number; nr: string } | null;
    if (!order || typeof order.id !== 'number' || typeof order.nr !== 'string') fail('no order in data');
    if (def.expect === 'order-exact' && order!.nr !== ctx.exactOrderNr) fail(`found ${order!.nr}, expected ${ctx.exactOrderNr}`);
    return 1;
  }
  const data = body.data as ListData;
  if (!data || !Array.isArray(data.invoices) || typeof data.pagination?.total !== 'number') fail('no invoices/pagination in data');
  const total = data.pagination.total;
  if (def.expect === 'miss' && total !== 0) fail(`a miss matched ${total} rows`);
  if (def.expect === 'hit' && total === 0) fail('a hit matched no row');
  if ((def.expect === 'nonempty-page' || def.expect === 'hit') && data.invoices.length === 0) fail('empty page');
  if (data.invoices.length > data.pagination.per_page) fail(`${data.invoices.length} rows on a page of ${data.pagination.per_page}`);
  return total;
}

/** Reads what the queries need from the database itself, and the number of pages from the API. */
export async function queryContext(knex: Knex, api: ApiProcess, directory: string): Promise<QueryContext> {
  const vatRow = (await knex('invoices').select('customer_vat').where({ directory }).orderBy('id').first()) as { customer_vat: string };
  const orderRow = (await knex('orders').select('nr').where({ directory }).orderBy('id').offset(4320).first()) as { nr: string } | undefined;
  const first = await api.call({ path: list({}) });
  if (first.status !== 200) throw new Error(`${api.label}: GET /v1/invoices answered ${first.status}: ${first.body.toString().slice(0, 300)}`);
  const data = (JSON.parse(first.body.toString('utf8')) as Envelope).data as ListData;
  const now = new Date();
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0));
  return {
    totalPages: data.pagination.total_pages,
    vat: vatRow.customer_vat,
    exactOrderNr: orderRow?.nr ?? 'missing',
    monthFrom: monthStart.toISOString().slice(0, 10),
    monthTo: monthEnd.toISOString().slice(0, 10),
  };
}

export interface QueryMeasurement {
  /** Timed samples, ms, in order. */
  samples: number[];
  p50: number;
  p90: number;
  /** The first (cold) request of the query on this database, ms. */
  firstMs: number;
  /** Rows the query matched (pagination.total; 1/0 for by-nr). */
  matched: number;
  /** Bytes of the answer. */
  bytes: number;
  path: string;
  /** True when the time budget stopped the samples early. */
  budgetHit: boolean;
}

export interface QueryTarget {
  /** `MariaDB 10k` */
  label: string;
  api: ApiProcess;
  ctx: QueryContext;
}

/**
 * Every query on every database, interleaved: for each query, warm-up
 * requests on each database, then round after round one timed request per
 * database, so that noise from the shared machine hits all sizes alike.
 */
export async function runQueries(
  targets: QueryTarget[],
  options: { rounds: number; warmup: number; budgetSeconds: number; only?: string[] },
): Promise<Record<string, Record<string, QueryMeasurement>>> {
  const results: Record<string, Record<string, QueryMeasurement>> = {};
  const defs = options.only ? QUERIES.filter((q) => options.only!.includes(q.id)) : QUERIES;
  let index = 0;
  for (const def of defs) {
    index += 1;
    const started = Date.now();
    const perTarget = new Map<QueryTarget, { samples: number[]; spent: number; first: number; matched: number; bytes: number; budgetHit: boolean }>();
    for (const target of targets) {
      const path = def.path(target.ctx);
      let first = NaN;
      let matched = 0;
      let bytes = 0;
      for (let i = 0; i < Math.max(1, options.warmup); i++) {
        const answer = await target.api.call({ path });
        matched = checkAnswer(def, target.ctx, target.label, answer);
        bytes = answer.body.length;
        if (i === 0) first = answer.ms;
      }
      perTarget.set(target, { samples: [], spent: 0, first, matched, bytes, budgetHit: false });
    }
    for (let round = 0; round < options.rounds; round++) {
      for (const target of targets) {
        const state = perTarget.get(target)!;
        if (state.spent > options.budgetSeconds * 1000 && state.samples.length >= 3) {
          state.budgetHit = true;
          continue;
        }
        const answer = await target.api.call({ path: def.path(target.ctx) });
        checkAnswer(def, target.ctx, target.label, answer);
        state.samples.push(answer.ms);
        state.spent += answer.ms;
      }
    }
    const line: string[] = [];
    for (const target of targets) {
      const state = perTarget.get(target)!;
      const measurement: QueryMeasurement = {
        samples: state.samples.map((ms) => Math.round(ms * 100) / 100),
        p50: percentile(state.samples, 50),
        p90: percentile(state.samples, 90),
        firstMs: state.first,
        matched: state.matched,
        bytes: state.bytes,
        path: def.path(target.ctx),
        budgetHit: state.budgetHit,
      };
      (results[def.id] ??= {})[target.label] = measurement;
      line.push(`${target.label} ${measurement.p50.toFixed(1)} ms`);
    }
    log(`[${index}/${defs.length}] ${def.label}: ${line.join(', ')} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  return results;
}
