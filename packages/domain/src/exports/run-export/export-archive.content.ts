import type { InvoiceListItem } from '../../events/invoice-list-item.js';
import type { ArchiveMember } from '../../ports/export-archive.port.js';
import type { Export } from '../export.js';

/** The columns of `invoices.csv`, in order (contract, "Exports"). */
export const EXPORT_CSV_COLUMNS = [
  'id',
  'nr',
  'type',
  'status',
  'branch_id',
  'issue_date',
  'service_date',
  'payment_term',
  'payment_date',
  'customer_name',
  'customer_vat',
  'customer_country',
  'currency',
  'amount_net',
  'amount_tax',
  'amount_gross',
  'paid',
  'left_to_pay',
  'correct_of',
  'added_time',
] as const;

/** What a spreadsheet reads as the start of a formula (OWASP "CSV injection"): `=`, `+`, `-`, `@`, tab, CR. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One RFC 4180 field: quoted when it holds a comma, a quote, CR or LF; null is an empty field. A text value
 * that starts like a formula gets a leading `'`, so no spreadsheet runs it (contract, "Exports"); numbers,
 * negative ones included, are written as they are.
 */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' && FORMULA_START.test(value) ? `'${value}` : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** `invoices.csv`: RFC 4180 (CRLF line ends), UTF-8, a header row and one row per list item, `correct_of` as the corrected invoice's id. */
export function invoicesCsv(items: readonly InvoiceListItem[]): string {
  const lines = [EXPORT_CSV_COLUMNS.join(',')];
  for (const item of items) {
    lines.push(EXPORT_CSV_COLUMNS.map((column) => csvField(column === 'correct_of' ? (item.correct_of?.id ?? null) : item[column])).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** `manifest.json`: what the archive holds, each document with its size and SHA-256. */
export function exportManifest(item: Export, invoices: ReadonlyArray<{ id: number; nr: string; files: ArchiveMember[] }>): string {
  return `${JSON.stringify(
    {
      export_id: item.id,
      created: item.created,
      events_cursor: item.eventsCursor,
      filters: item.filters,
      documents: item.documents,
      lang: item.lang,
      duplicate: item.duplicate,
      invoices: invoices.map((invoice) => ({
        id: invoice.id,
        nr: invoice.nr,
        files: invoice.files.map((file) => ({ path: file.path, size: file.size, sha256: file.sha256 })),
      })),
    },
    null,
    2,
  )}\n`;
}
