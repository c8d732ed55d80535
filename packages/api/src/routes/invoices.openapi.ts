import { eInvoiceQuerySchema, invoicePdfQuerySchema, listInvoicesQuerySchema, Messages } from '@logi/domain';
import { ref } from '../ops/openapi/openapi-components.js';
import { COUNTED, commonErrors, errorResponse, jsonResponse, responseHeaders, validationResponse } from '../ops/openapi/openapi-responses.js';
import { queryParameters } from '../ops/openapi/query-parameters.js';
import { pathIdParameter } from '../ops/openapi/request.schemas.js';

/** The OpenAPI side of invoices.routes.ts: the query parameters are the domain's schemas that validate them. */

export const INVOICES_TAG = { name: 'Invoices', description: 'Invoice list, PDF download and EN 16931 e-invoices (UBL, CII).' };

const invalidData = { const: Messages.INVALID_DATA };

/** The `If-None-Match` request header of a conditional GET. */
function ifNoneMatchHeader(description: string) {
  return { name: 'If-None-Match', in: 'header', required: false, description, schema: { type: 'string' } } as const;
}

/** The invoice calls: the list, the PDF (and Factur-X), the e-invoice. */
export function invoicePaths() {
  return {
    '/invoices': {
      get: {
        operationId: 'listInvoices',
        tags: ['Invoices'],
        summary: 'List invoices',
        description: [
          'A page of this client\'s invoices, filtered and sorted. Every parameter is optional; an empty value counts as absent; unknown parameters are ignored.',
          'Periods are whole days in APP_TIMEZONE: `cur_month`, `prev_month`, `last_N_days` (N days ending today, today included), `custom` (`date_from`..`date_to`, inclusive, at least one of them).',
          'Sorting breaks ties by `id` in the same direction; a null `payment_date` sorts as the smallest value; text sorts case-insensitively.',
        ].join('\n\n'),
        parameters: [
          ...queryParameters(listInvoicesQuerySchema),
          ifNoneMatchHeader('The `ETag` of an earlier answer (or several, or `*`): when this answer would be the same bytes, 304 with no body.'),
        ],
        responses: {
          '200': jsonResponse('A page of invoices (a page past the end is empty, with a correct `pagination`).', ref('InvoiceListEnvelope'), [
            ...COUNTED,
            'ETag',
            'Cache-Control',
          ]),
          '304': {
            description: 'The client\'s copy (named in `If-None-Match`) is still this answer: no body. Credentials, rate limit and validation come first.',
            headers: responseHeaders([...COUNTED, 'ETag', 'Cache-Control']),
          },
          '422': validationResponse('Any invalid value, unknown enum member, repeated or bracketed parameter.', invalidData, {
            status: 422,
            message: Messages.INVALID_DATA,
            data: null,
            errors: { per_page: ['The per_page field must not be greater than 500.'] },
          }),
          ...commonErrors(),
        },
      },
    },
    '/invoices/{invoice_id}/pdf': {
      get: {
        operationId: 'downloadInvoicePdf',
        tags: ['Invoices'],
        summary: 'Download an invoice PDF',
        description: [
          'The invoice printed as PDF in the chosen language (title, labels, dates and amounts in its conventions); with `duplicate` it is marked as a duplicate copy. A missing invoice is 404 even when the query is also invalid.',
          'Every answer carries a strong `ETag` (the version of everything printed and of the template) and `Cache-Control: private, no-cache`. A client that sends it back in `If-None-Match` gets 304 with no body while nothing printed changed; credentials, rate limit, tenancy (404) and validation (422) come first, and nothing is rendered for a 304.',
          'A rendered PDF is kept on the server under its version (for up to PDF_CACHE_MAX_AGE_HOURS, at most PDF_CACHE_MAX_OBJECTS of them), so a repeated download is served from storage without a render; any change to the invoice, its related rows, the seller\'s data or the template gives a new version, and an old PDF is never served for new data.',
          '`format=facturx` gives the same PDF (in the same `lang`, with the same duplicate mark) as Factur-X: PDF/A-3b with XMP metadata (PDF/A identification, Factur-X extension schema), an sRGB output intent, its fonts embedded, and the EN 16931 CII XML attached as `factur-x.xml` (relationship `Alternative`, profile EN 16931); that XML is byte for byte the answer of `GET /invoices/{invoice_id}/e-invoice?format=cii` in the same `lang`. Factur-X and the plain PDF are two versions (two ETags, two cached objects). The plain PDF stays the default.',
        ].join('\n\n'),
        parameters: [
          pathIdParameter('invoice_id', 'Invoice', 9001),
          ...queryParameters(invoicePdfQuerySchema),
          ifNoneMatchHeader('The `ETag` of an earlier download (or several, or `*`): when the document is still that version, 304 with no body.'),
        ],
        responses: {
          '200': {
            description: 'The PDF, as a download named after the invoice number.',
            headers: responseHeaders([...COUNTED, 'Content-Disposition', 'ETag (PDF)', 'Cache-Control']),
            content: { 'application/pdf': { schema: { type: 'string', contentMediaType: 'application/pdf', format: 'binary' } } },
          },
          '304': {
            description: 'The client\'s copy (named in `If-None-Match`) is still this document: no body, nothing rendered.',
            headers: responseHeaders([...COUNTED, 'ETag (PDF)', 'Cache-Control']),
          },
          '404': errorResponse(404, 'No such invoice for this client, or an id that is not a positive integer.', Messages.INVOICE_NOT_FOUND),
          '422': validationResponse('`lang`, `duplicate` or `format` invalid, or sent twice.', invalidData, {
            status: 422,
            message: Messages.INVALID_DATA,
            data: null,
            errors: { lang: ['The selected lang is invalid.'] },
          }),
          ...commonErrors(),
        },
      },
    },
    '/invoices/{invoice_id}/e-invoice': {
      get: {
        operationId: 'downloadEInvoice',
        tags: ['Invoices'],
        summary: 'Download an invoice as an EN 16931 e-invoice (UBL or CII)',
        description: [
          'The invoice as a structured EN 16931 document for machine booking: `format=ubl` (default) is OASIS UBL 2.1, `format=cii` is UN/CEFACT Cross Industry Invoice D16B; both carry the customization ID `urn:cen.eu:en16931:2017`. The document is built from the very data and texts the PDF prints, so the two never disagree: amounts, the VAT breakdown per rate, the payment terms and the client\'s bank account are the PDF\'s; the related order numbers are the buyer reference (BT-10) and their CMR numbers the despatch advice reference (BT-16).',
          'A sales invoice (`s`) is an invoice (type code 380). A correcting invoice (`c`) is a credit note (UBL `CreditNote`, CII type code 381) that references the corrected invoice (BT-25); its amounts change sign, so a correction that lowers the price is a credit note with positive amounts. A purchase invoice (`p`) swaps the parties as the PDF does: the counterparty is the seller. `lang` chooses the language of the texts inside (correction note, payment terms, reasons for untaxed items), as on the PDF.',
          'Data EN 16931 needs that the invoice does not hold gets documented defaults (README, "E-invoices"): unit codes from the printed unit (`pcs` H87, `h` HUR, else C62), VAT category from the rate (a percentage S, 0 Z, `zw` E, `np` AE reverse charge), the seller\'s country from its VAT number\'s prefix.',
          'Same rules as the PDF: credentials, rate limit, tenancy (404, even with an invalid query) and validation (422) in that order; a strong `ETag` (the SHA-256 of the document\'s data, syntax and writer version) with `Cache-Control: private, no-cache`, and 304 for a matching `If-None-Match`.',
        ].join('\n\n'),
        parameters: [
          pathIdParameter('invoice_id', 'Invoice', 9001),
          ...queryParameters(eInvoiceQuerySchema),
          ifNoneMatchHeader('The `ETag` of an earlier download (or several, or `*`): when the document is still that version, 304 with no body.'),
        ],
        responses: {
          '200': {
            description: 'The XML (UTF-8), as a download named after the invoice number with `.xml`.',
            headers: responseHeaders([...COUNTED, 'Content-Disposition', 'ETag (e-invoice)', 'Cache-Control']),
            content: { 'application/xml': { schema: { type: 'string', contentMediaType: 'application/xml' } } },
          },
          '304': {
            description: 'The client\'s copy (named in `If-None-Match`) is still this document: no body.',
            headers: responseHeaders([...COUNTED, 'ETag (e-invoice)', 'Cache-Control']),
          },
          '404': errorResponse(404, 'No such invoice for this client, or an id that is not a positive integer.', Messages.INVOICE_NOT_FOUND),
          '422': validationResponse('`format` or `lang` invalid, or sent twice.', invalidData, {
            status: 422,
            message: Messages.INVALID_DATA,
            data: null,
            errors: { format: ['The selected format is invalid.'] },
          }),
          ...commonErrors(),
        },
      },
    },
  };
}
