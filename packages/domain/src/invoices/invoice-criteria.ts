import type { Invoice, InvoiceStatus, InvoiceType } from './invoice.js';

export const INVOICE_DATE_FIELDS = ['added_date', 'issue_date', 'service_date', 'payment_term', 'payment_date'] as const;
export type InvoiceDateField = (typeof INVOICE_DATE_FIELDS)[number];

export const INVOICE_SORT_FIELDS = [
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
] as const;
export type InvoiceSortField = (typeof INVOICE_SORT_FIELDS)[number];

export type SortDirection = 'asc' | 'desc';

/** A half-open range of Unix seconds: from <= t < toExclusive; a null end is open. */
export interface TimeRange {
  from: number | null;
  toExclusive: number | null;
}

/**
 * What the invoice list asks of the repository, already validated.
 * Text criteria are matched literally and case-insensitively (Unicode-aware).
 */
export interface InvoiceCriteria {
  directory: string;
  page: number;
  perPage: number;
  dateFilter: { field: InvoiceDateField; range: TimeRange } | null;
  types: InvoiceType[] | null;
  statuses: InvoiceStatus[] | null;
  branchIds: number[] | null;
  /** Exact match, case-insensitive. */
  customerVats: string[] | null;
  /** Substring, case-insensitive. */
  customerName: string | null;
  /** Two lower-case letters. */
  customerCountry: string | null;
  /** Substring of invoice nr, a related order's nr, or an item's name. */
  search: string | null;
  /** Ties are broken by id in the same direction; null sorts as the smallest value. */
  sortBy: InvoiceSortField;
  sortDir: SortDirection;
}

export interface InvoicePage {
  invoices: Invoice[];
  total: number;
}

/** Every invoice of a directory, first page, newest issue date first: what an empty query asks for. */
export function defaultInvoiceCriteria(directory: string): InvoiceCriteria {
  return {
    directory,
    page: 1,
    perPage: 250,
    dateFilter: null,
    types: null,
    statuses: null,
    branchIds: null,
    customerVats: null,
    customerName: null,
    customerCountry: null,
    search: null,
    sortBy: 'issue_date',
    sortDir: 'desc',
  };
}
