/**
 * A small reference implementation of GET /invoices and GET /orders/by-nr over
 * rows read straight from the database, and the checks of an answer against it.
 */
import type { Knex } from 'knex';
import { expect } from 'vitest';
import { periodRange } from './calendar.js';
import { DATE_FIELDS, type Answer, envelopeOf, expectStatus } from './contract.js';

/** The embedded profile's fold: canonical decomposition, combining marks dropped, lower case. */
export const fold = (text: string) =>
  text
    .normalize('NFD')
    .replace(/\p{Mn}/gu, '')
    .toLowerCase()
    .normalize('NFC');

/** ASCII in utf8mb4_unicode_ci's order (read from MariaDB 10.11: ORDER BY over CHAR(32..126)), letters folded. */
export const UCA_ASCII = ' `^_-,;:!?.\'"()[]{}@*/\\&#%+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz';
export const ASCII_RANK = new Map([...UCA_ASCII].map((c, i) => [c, 2 * i]));
/** Letters with a primary weight of their own, right after their base letter; and the expansions. */
export const AFTER: Record<string, string> = { ł: 'l', đ: 'd', ø: 'o', ı: 'i', ħ: 'h', ŧ: 't' };
export const EXPAND: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe' };
export const OTHER = 1_000;

/** Sort weights of a text on the SQLite profile: ASCII as MariaDB orders it, other characters after, by code point. */
export function sortWeights(text: string): number[] {
  const weights: number[] = [];
  // eslint-disable-next-line no-control-regex -- control characters are what the sort key drops, as in textSortKey
  const controls = /[\u0000-\u001f\u007f]/g;
  const folded = fold(text)
    .replace(controls, '')
    .replace(/(?<! ) +$/, '');
  for (const char of folded) {
    const expansion = EXPAND[char];
    if (expansion) for (const c of expansion) weights.push(ASCII_RANK.get(c)!);
    else if (ASCII_RANK.has(char)) weights.push(ASCII_RANK.get(char)!);
    else if (AFTER[char]) weights.push(ASCII_RANK.get(AFTER[char])! + 1);
    else weights.push(OTHER, char.codePointAt(0)!);
  }
  return weights;
}

export function compareWeights(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

export interface InvoiceRef {
  id: number;
  directory: string;
  nr: string;
  type: string;
  status: string;
  branchId: number;
  dates: Record<(typeof DATE_FIELDS)[number], number | null>;
  sort: Record<string, number | null | number[]>;
  customerName: string;
  vat: string;
  country: string;
  /** The invoice nr, its orders' nrs and its items' texts. */
  texts: string[];
}
export interface OrderRef {
  id: number;
  directory: string;
  nr: string;
  ownnr: string;
}
export interface Rows {
  invoices: InvoiceRef[];
  orders: OrderRef[];
}

export async function readRows(knex: Knex): Promise<Rows> {
  const [invoices, invoiceOrders, items, orders] = await Promise.all([
    knex('invoices').select('*') as Promise<Array<Record<string, any>>>,
    knex('invoice_orders').select('invoice_id', 'nr') as Promise<Array<{ invoice_id: number; nr: string }>>,
    knex('invoice_items').select('invoice_id', 'name') as Promise<Array<{ invoice_id: number; name: string }>>,
    knex('orders').select('id', 'directory', 'nr', 'ownnr') as Promise<Array<Record<string, any>>>,
  ]);
  const texts = new Map<number, string[]>();
  for (const row of [...invoiceOrders.map((o) => [o.invoice_id, o.nr] as const), ...items.map((i) => [i.invoice_id, i.name] as const)]) {
    texts.set(Number(row[0]), [...(texts.get(Number(row[0])) ?? []), String(row[1])]);
  }
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    invoices: invoices.map((r) => ({
      id: Number(r.id),
      directory: String(r.directory),
      nr: String(r.nr),
      type: String(r.type),
      status: String(r.status),
      branchId: Number(r.branch_id),
      dates: {
        added_date: num(r.added_time),
        issue_date: num(r.issue_date),
        service_date: num(r.service_date),
        payment_term: num(r.payment_term),
        payment_date: num(r.payment_date),
      },
      sort: {
        issue_date: num(r.issue_date),
        service_date: num(r.service_date),
        payment_term: num(r.payment_term),
        payment_date: num(r.payment_date),
        nr: sortWeights(String(r.nr)),
        amount_gross: num(r.amount_gross),
        amount_net: num(r.amount_net),
        amount_tax: num(r.amount_tax),
        customer_name: sortWeights(String(r.customer_name)),
        added_time: num(r.added_time),
      },
      customerName: String(r.customer_name),
      vat: String(r.customer_vat),
      country: String(r.customer_country),
      texts: [String(r.nr), ...(texts.get(Number(r.id)) ?? [])],
    })),
    orders: orders.map((o) => ({ id: Number(o.id), directory: String(o.directory), nr: String(o.nr), ownnr: String(o.ownnr) })),
  };
}

export interface ListExpectation {
  ids: number[];
  page: number;
  perPage: number;
  total: number;
  totalPages: number;
}

/** GET /invoices over `rows` for one directory, from valid decoded values, per the contract. */
export function referenceList(rows: Rows, directory: string, values: Partial<Record<string, string>>, nowMs: number, zone: string): ListExpectation {
  const items = (v: string | undefined) => (v === undefined ? null : new Set(v.split(',').map((s) => s.trim())));
  const types = items(values.types);
  const statuses = items(values.statuses);
  const branches = values.branch_ids === undefined ? null : new Set(values.branch_ids.split(',').map((s) => Number(s.trim())));
  const vats = values.customer_vats === undefined ? null : new Set(values.customer_vats.split(',').map((s) => fold(s.trim())));
  const name = values.customer_name === undefined ? null : fold(values.customer_name.trim());
  const search = values.search === undefined ? null : fold(values.search.trim());
  const country = values.customer_country?.toLowerCase() ?? null;
  const field = (values.date_field ?? 'issue_date') as (typeof DATE_FIELDS)[number];
  const range = values.period ? periodRange(values.period, nowMs, zone, values.date_from, values.date_to) : null;
  const matching = rows.invoices.filter((r) => {
    if (r.directory !== directory) return false;
    if (types && !types.has(r.type)) return false;
    if (statuses && !statuses.has(r.status)) return false;
    if (branches && !branches.has(r.branchId)) return false;
    if (vats && !vats.has(fold(r.vat))) return false;
    if (name !== null && !fold(r.customerName).includes(name)) return false;
    if (country !== null && r.country !== country) return false;
    if (search !== null && !r.texts.some((t) => fold(t).includes(search))) return false;
    if (range) {
      const t = r.dates[field];
      if (t === null || (range.from !== null && t < range.from) || (range.to !== null && t >= range.to)) return false;
    }
    return true;
  });
  const sortBy = values.sort_by ?? 'issue_date';
  const direction = (values.sort_dir ?? 'desc') === 'asc' ? 1 : -1;
  const compareValues = (a: number | null | number[], b: number | null | number[]) => {
    if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
    return Array.isArray(a) ? compareWeights(a, b as number[]) : a - (b as number);
  };
  matching.sort((a, b) => direction * (compareValues(a.sort[sortBy]!, b.sort[sortBy]!) || a.id - b.id));
  const page = Number(values.page ?? 1);
  const perPage = Number(values.per_page ?? 250);
  const start = (page - 1) * perPage;
  const ids = start >= matching.length ? [] : matching.slice(start, start + perPage).map((r) => r.id);
  return { ids, page, perPage, total: matching.length, totalPages: Math.ceil(matching.length / perPage) };
}

/** GET /orders/by-nr per the contract: an exact case-insensitive match, else the lowest id containing the nr. */
export function referenceByNr(rows: Rows, directory: string, nr: string): OrderRef | null {
  const wanted = fold(nr);
  const mine = rows.orders.filter((o) => o.directory === directory).sort((a, b) => a.id - b.id);
  return mine.find((o) => fold(o.nr) === wanted) ?? mine.find((o) => fold(o.nr).includes(wanted)) ?? null;
}

export function checkListAnswer(answer: Answer, expected: ListExpectation, rows: Rows, context: string): void {
  expectStatus(answer, [200], context);
  const body = envelopeOf(answer, context);
  const got = body.data as { invoices: Array<{ id: number; nr: string; customer_name: string }>; pagination: Record<string, number> };
  const byId = new Map(rows.invoices.map((r) => [r.id, r]));
  expect(
    {
      ids: got.invoices.map((i) => i.id),
      page: got.pagination.page,
      perPage: got.pagination.per_page,
      total: got.pagination.total,
      totalPages: got.pagination.total_pages,
    },
    context,
  ).toEqual(expected);
  for (const invoice of got.invoices)
    expect({ nr: invoice.nr, customer_name: invoice.customer_name }, context).toEqual({
      nr: byId.get(invoice.id)!.nr,
      customer_name: byId.get(invoice.id)!.customerName,
    });
}

export function checkByNrAnswer(answer: Answer, expected: OrderRef | null, nr: string, context: string): void {
  expectStatus(answer, [200, 404], context);
  const body = envelopeOf(answer, context);
  if (expected)
    expect({ status: answer.status, data: body.data }, context).toEqual({ status: 200, data: { id: expected.id, nr: expected.nr, ownnr: expected.ownnr } });
  else
    expect({ status: answer.status, message: body.message, data: body.data }, context).toEqual({
      status: 404,
      message: `Order with given nr (${nr}) not found`,
      data: null,
    });
}
