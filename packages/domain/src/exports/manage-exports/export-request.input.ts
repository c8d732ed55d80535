import { z } from 'zod';
import { ValidationError, type FieldErrors } from '../../shared/common.errors.js';
import { DOCUMENT_LANGUAGES, type DocumentLanguage } from '../../invoices/invoice-document/invoice-document.js';
import type { InvoiceCriteria } from '../../invoices/invoice-criteria.js';
import { LIST_INVOICES_PARAMS, listInvoicesQuerySchema, parseListInvoicesQuery } from '../../invoices/list-invoices/list-invoices.query.js';
import { EXPORT_DOCUMENTS, type ExportDocument } from '../export.js';

/** List parameters that make no sense for an export: it holds every matching invoice, in the list's default order. */
export const EXPORT_FORBIDDEN_FILTERS = ['page', 'per_page', 'sort_by', 'sort_dir'] as const;
export const EXPORT_FILTER_PARAMS = LIST_INVOICES_PARAMS.filter((name) => !(EXPORT_FORBIDDEN_FILTERS as readonly string[]).includes(name));

/** A filter value is at most what a query string may hold (8 KiB; a longer query is 414 on the list). */
const FILTER_VALUE_MAX = 8192;
const filterValue = z
  .string({ error: 'Each filter must be a string, as in a query.' })
  .max(FILTER_VALUE_MAX, { error: `A filter must not be longer than ${FILTER_VALUE_MAX} characters.` });
const LIST_SHAPE = listInvoicesQuerySchema.shape as Record<string, z.ZodType>;
const filtersSchema = z
  .object(
    Object.fromEntries(
      EXPORT_FILTER_PARAMS.map((name) => [
        name,
        filterValue.optional().meta({ description: `As \`${name}\` of \`GET /v1/invoices\`: ${String(LIST_SHAPE[name]?.meta()?.description ?? '')}` }),
      ]),
    ),
    { error: 'The filters field must be an object.' },
  )
  // Other names are read too: `page`, `per_page`, `sort_by`, `sort_dir` are refused by name, unknown ones ignored.
  .catchall(filterValue);

const booleanLike = (name: string) =>
  z
    .union([z.boolean(), z.enum(['true', 'false', '1', '0'])], { error: `The ${name} field must be true or false.` })
    .transform((value) => value === true || value === 'true' || value === '1');

/** The body of POST /v1/exports; one schema for validation and the OpenAPI document. */
export const createExportSchema = z.object({
  filters: filtersSchema.optional().meta({
    description:
      'Any `GET /v1/invoices` query parameter except `page`, `per_page`, `sort_by` and `sort_dir`, with the same values and rules, each as a string (as in a query). Absent: every invoice.',
    examples: [{ period: 'prev_month', statuses: 'paid,semipaid' }],
  }),
  documents: z
    .array(z.enum(EXPORT_DOCUMENTS, { error: 'The selected documents is invalid.' }), { error: 'The documents field must be an array.' })
    .min(1, { error: 'The documents field must not be empty.' })
    .max(EXPORT_DOCUMENTS.length * 4, { error: 'The documents field has too many items.' })
    .transform((list) => EXPORT_DOCUMENTS.filter((document) => list.includes(document)))
    .optional()
    .meta({ description: 'The documents of each invoice: `pdf`, `facturx`, `ubl`, `cii` (repeats count once).', default: ['pdf'] }),
  lang: z.enum(DOCUMENT_LANGUAGES, { error: 'The selected lang is invalid.' }).optional().meta({ description: 'Document language.', default: 'en' }),
  duplicate: booleanLike('duplicate').optional().meta({ description: 'Mark the PDFs as duplicate copies.', default: false }),
  csv: z.boolean({ error: 'The csv field must be true or false.' }).optional().meta({ description: 'Add `invoices.csv`.', default: true }),
});

export interface ExportRequest {
  /** The filters as sent, empty values left out (they count as absent). */
  filters: Record<string, string>;
  documents: ExportDocument[];
  lang: DocumentLanguage;
  duplicate: boolean;
  csv: boolean;
}

/** Validates the body of POST /v1/exports; a bad member is 422 naming it (`filters.period`, `documents`, ...). */
export function parseExportRequest(body: unknown, context: { directory: string; now: Date; timeZone: string }): ExportRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw ValidationError.invalidData({ body: ['The body must be a JSON object.'] });
  const parsed = createExportSchema.safeParse(body);
  if (!parsed.success) throw ValidationError.invalidData(prefixFilterErrors(parsed.error));
  const data = parsed.data;
  const filters: Record<string, string> = {};
  const errors: FieldErrors = {};
  for (const [name, value] of Object.entries<string | undefined>(data.filters ?? {})) {
    if ((EXPORT_FORBIDDEN_FILTERS as readonly string[]).includes(name)) errors[`filters.${name}`] = [`The ${name} filter is not allowed in an export.`];
    // Unknown parameters are ignored, as by the list; an empty value counts as absent.
    else if (EXPORT_FILTER_PARAMS.includes(name) && value !== undefined && value !== '') filters[name] = value;
  }
  if (Object.keys(errors).length > 0) throw ValidationError.invalidData(errors);
  exportCriteria(filters, context);
  return { filters, documents: data.documents ?? ['pdf'], lang: data.lang ?? 'en', duplicate: data.duplicate ?? false, csv: data.csv ?? true };
}

/**
 * The list criteria an export's filters mean at `now` (its creation: a named period is the one of the day the export
 * was asked for), every matching invoice in the list's default order. Errors name `filters.<param>`.
 */
export function exportCriteria(filters: Record<string, string>, context: { directory: string; now: Date; timeZone: string }): Omit<InvoiceCriteria, 'perPage'> {
  try {
    const { perPage: _perPage, ...criteria } = parseListInvoicesQuery(Object.entries(filters), context);
    return criteria;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(error.message, Object.fromEntries(Object.entries(error.errors).map(([field, messages]) => [`filters.${field}`, messages])));
  }
}

function prefixFilterErrors(error: z.ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const [top, second] = issue.path;
    const field = top === 'filters' && second !== undefined ? `filters.${String(second)}` : top !== undefined ? String(top) : 'body';
    const list = (errors[field] ??= []);
    if (!list.includes(issue.message)) list.push(issue.message);
  }
  return errors;
}
