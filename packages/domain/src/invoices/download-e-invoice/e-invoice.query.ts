import { z } from 'zod';
import { ValidationError } from '../../shared/common.errors.js';
import { readSingleValues } from '../../shared/query-params.js';
import { enumField } from '../../shared/query-fields.js';
import { fieldErrorsFromZod } from '../../shared/zod-errors.js';
import { DOCUMENT_LANGUAGES, type DocumentLanguage } from '../invoice-document/invoice-document.js';
import { E_INVOICE_FORMATS, type EInvoiceFormat } from '../e-invoice/e-invoice.js';

/** The query of GET /invoices/{id}/e-invoice; one schema for validation and the OpenAPI document. */
export const eInvoiceQuerySchema = z.object({
  format: enumField('format', E_INVOICE_FORMATS).optional().meta({
    description:
      'The document: EN 16931 as `ubl` (OASIS UBL 2.1 Invoice / CreditNote) or `cii` (UN/CEFACT CII D16B), or a national format: `xrechnung-ubl`, `xrechnung-cii` (XRechnung 3.0), `peppol` (Peppol BIS Billing 3.0), `cius-ro` (RO e-Factura CIUS-RO), `ksef` (Polish KSeF FA(3)). An invoice that lacks data its national format needs is 422 on `format`, naming what is missing.',
    default: 'ubl',
  }),
  lang: enumField('lang', DOCUMENT_LANGUAGES)
    .optional()
    .meta({ description: 'Language of the texts inside the document (notes, payment terms), as on the PDF.', default: 'en' }),
});

export function parseEInvoiceQuery(pairs: Iterable<[string, string]>): { format: EInvoiceFormat; lang: DocumentLanguage } {
  const { values, errors } = readSingleValues(pairs, Object.keys(eInvoiceQuerySchema.shape));
  const parsed = eInvoiceQuerySchema.safeParse(values);
  const allErrors = { ...(parsed.success ? {} : fieldErrorsFromZod(parsed.error)), ...errors };
  if (!parsed.success || Object.keys(allErrors).length > 0) throw ValidationError.invalidData(allErrors);
  return { format: parsed.data.format ?? 'ubl', lang: parsed.data.lang ?? 'en' };
}
