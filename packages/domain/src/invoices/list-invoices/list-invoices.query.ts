import { z } from 'zod';
import { ValidationError } from '../../shared/common.errors.js';
import { readSingleValues } from '../../shared/query-params.js';
import { enumField, integerField, listField, textField } from '../../shared/query-fields.js';
import { fieldErrorsFromZod } from '../../shared/zod-errors.js';
import { INVOICE_STATUSES, INVOICE_TYPES } from '../invoice.js';
import { defaultInvoiceCriteria, INVOICE_DATE_FIELDS, INVOICE_SORT_FIELDS, type InvoiceCriteria } from '../invoice-criteria.js';
import { isCalendarDate, periodRange, PERIODS } from './periods.js';

export const MAX_PER_PAGE = 500;
export const DEFAULT_PER_PAGE = defaultInvoiceCriteria('').perPage;

const calendarDate = (name: string) => {
  const error = `The ${name} field must be a valid date in the format YYYY-MM-DD.`;
  // YYYY-MM-DD is 10 characters: the bound lets the document say so (a longer value was never a date).
  return z.string().max(10, { error, abort: true }).refine(isCalendarDate, { error });
};

/**
 * The query of GET /invoices: every parameter optional, each a single string.
 * This one schema validates requests and feeds the OpenAPI document.
 */
export const listInvoicesQuerySchema = z.object({
  page: integerField('page', 1).optional().meta({ description: 'Page number; a page past the end is empty.', default: '1' }),
  per_page: integerField('per_page', 1, MAX_PER_PAGE)
    .optional()
    .meta({ description: 'Results per page (1-500).', default: String(DEFAULT_PER_PAGE) }),
  period: enumField('period', PERIODS).optional().meta({ description: 'Predefined date range, in APP_TIMEZONE.' }),
  date_field: enumField('date_field', INVOICE_DATE_FIELDS)
    .optional()
    .meta({ description: 'Date the period applies to; used only with period.', default: 'issue_date' }),
  date_from: calendarDate('date_from').optional().meta({ description: 'First day (inclusive) when period=custom.', format: 'date' }),
  date_to: calendarDate('date_to').optional().meta({ description: 'Last day (inclusive) when period=custom.', format: 'date' }),
  types: listField('types', enumField('types', INVOICE_TYPES)).optional().meta({ description: 'Comma-separated invoice types: s, c, p.' }),
  statuses: listField('statuses', enumField('statuses', INVOICE_STATUSES))
    .optional()
    .meta({ description: 'Comma-separated statuses: issued, paid, semipaid, overdue.' }),
  branch_ids: listField('branch_ids', integerField('branch_ids', 0)).optional().meta({ description: 'Comma-separated branch ids.' }),
  customer_vats: listField('customer_vats', textField('customer_vats', 64))
    .optional()
    .meta({ description: 'Comma-separated VAT numbers; exact, case-insensitive.' }),
  customer_name: textField('customer_name')
    .optional()
    .meta({ description: 'Case-insensitive substring of the customer name, taken literally (spaces around it trimmed, like nr).' }),
  customer_country: z
    .string()
    .length(2, { error: 'The customer_country field must be two letters.', abort: true })
    .regex(/^[A-Za-z]{2}$/, { error: 'The customer_country field must be two letters.' })
    .transform((value) => value.toLowerCase())
    .optional()
    .meta({ description: 'Two-letter country code, case-insensitive.' }),
  search: textField('search').optional().meta({
    description: 'Case-insensitive substring of the invoice nr, a related order nr or an item text, taken literally (spaces around it trimmed, like nr).',
  }),
  sort_by: enumField('sort_by', INVOICE_SORT_FIELDS).optional().meta({ description: 'Sort field; ties are broken by id.', default: 'issue_date' }),
  sort_dir: enumField('sort_dir', ['asc', 'desc']).optional().meta({ description: 'Sort direction.', default: 'desc' }),
});

export const LIST_INVOICES_PARAMS = Object.keys(listInvoicesQuerySchema.shape);

export type ListInvoicesQuery = z.output<typeof listInvoicesQuerySchema>;

/** Validates raw query pairs into repository criteria, or throws a 422 ValidationError. */
export function parseListInvoicesQuery(pairs: Iterable<[string, string]>, context: { directory: string; now: Date; timeZone: string }): InvoiceCriteria {
  const { values, errors } = readSingleValues(pairs, LIST_INVOICES_PARAMS);
  for (const key of ['customer_name', 'search'] as const) {
    if (values[key] !== undefined && values[key].trim() === '') delete values[key];
    else if (values[key] !== undefined) values[key] = values[key].trim();
  }
  const parsed = listInvoicesQuerySchema.safeParse(values);
  const allErrors = { ...(parsed.success ? {} : fieldErrorsFromZod(parsed.error)), ...errors };
  if (!parsed.success || Object.keys(allErrors).length > 0) throw ValidationError.invalidData(allErrors);
  const q = parsed.data;

  if (q.period === 'custom') {
    if (!q.date_from && !q.date_to) {
      throw ValidationError.invalidData({ date_from: ['The date_from field is required when period is custom and date_to is absent.'] });
    }
    if (q.date_from && q.date_to && q.date_from > q.date_to) {
      throw ValidationError.invalidData({ date_from: ['The date_from field must be a date before or equal to date_to.'] });
    }
  }

  const defaults = defaultInvoiceCriteria(context.directory);
  return {
    ...defaults,
    page: q.page ?? defaults.page,
    perPage: q.per_page ?? defaults.perPage,
    dateFilter: q.period
      ? {
          field: q.date_field ?? 'issue_date',
          range: periodRange(q.period, context.now, context.timeZone, { from: q.date_from, to: q.date_to }),
        }
      : null,
    types: q.types ?? null,
    statuses: q.statuses ?? null,
    branchIds: q.branch_ids ?? null,
    customerVats: q.customer_vats ?? null,
    customerName: q.customer_name ?? null,
    customerCountry: q.customer_country ?? null,
    search: q.search ?? null,
    sortBy: q.sort_by ?? defaults.sortBy,
    sortDir: q.sort_dir ?? defaults.sortDir,
  };
}
