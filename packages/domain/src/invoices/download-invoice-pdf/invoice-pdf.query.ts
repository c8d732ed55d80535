import { z } from 'zod';
import { ValidationError } from '../../shared/common.errors.js';
import { readSingleValues } from '../../shared/query-params.js';
import { enumField } from '../../shared/query-fields.js';
import { fieldErrorsFromZod } from '../../shared/zod-errors.js';
import { DOCUMENT_LANGUAGES, type DocumentLanguage } from '../invoice-document/invoice-document.js';

/** What a PDF download is: the printed invoice, or Factur-X (PDF/A-3 with the CII XML inside). */
export const PDF_FORMATS = ['pdf', 'facturx'] as const;
export type PdfFormat = (typeof PDF_FORMATS)[number];

/** The query of GET /invoices/{id}/pdf; one schema for validation and the OpenAPI document. */
export const invoicePdfQuerySchema = z.object({
  lang: enumField('lang', DOCUMENT_LANGUAGES).optional().meta({ description: 'Document language.', default: 'en' }),
  duplicate: z
    .enum(['true', 'false', '1', '0'], { error: 'The duplicate field must be true or false.' })
    .transform((value) => value === 'true' || value === '1')
    .optional()
    .meta({ description: 'Mark the document as a duplicate copy.', default: 'false' }),
  format: enumField('format', PDF_FORMATS).optional().meta({
    description:
      '`pdf`: the printed invoice. `facturx`: the same PDF made PDF/A-3b with the EN 16931 CII XML (the `cii` e-invoice in the same `lang`) embedded as `factur-x.xml`, Factur-X profile EN 16931.',
    default: 'pdf',
  }),
});

export function parseInvoicePdfQuery(pairs: Iterable<[string, string]>): { lang: DocumentLanguage; duplicate: boolean; format: PdfFormat } {
  const { values, errors } = readSingleValues(pairs, Object.keys(invoicePdfQuerySchema.shape));
  const parsed = invoicePdfQuerySchema.safeParse(values);
  const allErrors = { ...(parsed.success ? {} : fieldErrorsFromZod(parsed.error)), ...errors };
  if (!parsed.success || Object.keys(allErrors).length > 0) throw ValidationError.invalidData(allErrors);
  return { lang: parsed.data.lang ?? 'en', duplicate: parsed.data.duplicate ?? false, format: parsed.data.format ?? 'pdf' };
}
