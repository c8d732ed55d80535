import { eInvoiceQuerySchema, invoicePdfQuerySchema, listInvoicesQuerySchema, Messages } from '@logi/domain';
import { ref } from '../ops/openapi/openapi-components.js';
import { COUNTED, commonErrors, errorResponse, jsonResponse, responseHeaders, validationResponse } from '../ops/openapi/openapi-responses.js';
import { queryParameters } from '../ops/openapi/query-parameters.js';
import type { GuideLinks } from '../ops/openapi/guides.js';
import { pathIdParameter } from '../ops/openapi/request.schemas.js';

/** The OpenAPI side of invoices.routes.ts: the query parameters are the domain's schemas that validate them. */

export const invoicesTag = (guides: GuideLinks) => ({
  name: 'Invoices',
  description: `Invoice list, PDF download and EN 16931 e-invoices (UBL, CII); e-invoices and Factur-X: ${guides.link('e-invoices')}.`,
  externalDocs: guides.externalDocs('invoices-and-pdfs', 'Invoices and PDFs: listing, conditional requests and the PDF cache.'),
});

const invalidData = { const: Messages.INVALID_DATA };

/** The `If-None-Match` request header of a conditional GET. */
function ifNoneMatchHeader(description: string) {
  // The server takes any length; only the 64 KiB of header fields bound it (`x-bounded-by`, read by .spectral.yaml).
  const schema = { type: 'string', 'x-bounded-by': 'No length limit of its own: the 64 KiB of header fields bound it (431).' };
  return { name: 'If-None-Match', in: 'header', required: false, description, schema } as const;
}

/** The invoice calls: the list, the PDF (and Factur-X), the e-invoice. */
export function invoicePaths(guides: GuideLinks) {
  return {
    '/invoices': {
      get: {
        operationId: 'listInvoices',
        tags: ['Invoices'],
        summary: 'List invoices',
        description: [
          "A page of this client's invoices, filtered and sorted. Every parameter is optional; unknown parameters are ignored.",
          'Periods are whole days in APP_TIMEZONE: `cur_month`, `prev_month`, `last_N_days` (N days ending today, today included), `custom` (`date_from`..`date_to`, inclusive, at least one of them).',
          'Sorting breaks ties by `id` in the same direction, so pages never overlap or skip a row; a null `payment_date` sorts as the smallest value; text sorts case-insensitively.',
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
            description: "The client's copy (named in `If-None-Match`) is still this answer: no body. Credentials, rate limit and validation come first.",
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
          'Every answer carries a strong `ETag` and `Cache-Control: private, no-cache`: send the value back in `If-None-Match` to get 304 with no body while nothing printed changed. Credentials, rate limit, tenancy (404) and validation (422) come first, and nothing is rendered for a 304.',
          'A rendered PDF is kept on the server under its version, so a repeated download is not rendered again, and an old PDF is never served for new data.',
          '`format=facturx` gives the same PDF (same `lang`, same duplicate mark) as Factur-X: PDF/A-3b with the EN 16931 CII XML attached as `factur-x.xml`, byte for byte the answer of `GET /invoices/{invoice_id}/e-invoice?format=cii` in the same `lang`; it is a version of its own (its own `ETag`). The plain PDF stays the default.',
          `What a version covers and how the cache is bounded: ${guides.link('invoices-and-pdfs')}. What Factur-X holds: ${guides.link('e-invoices')}.`,
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
            description: "The client's copy (named in `If-None-Match`) is still this document: no body, nothing rendered.",
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
        summary: 'Download an invoice as an e-invoice (EN 16931 UBL or CII, XRechnung, Peppol, CIUS-RO, KSeF FA(3))',
        description: [
          'The invoice as a structured EN 16931 document for machine booking: `format=ubl` (default) is OASIS UBL 2.1, `format=cii` is UN/CEFACT Cross Industry Invoice D16B; both carry the customization ID `urn:cen.eu:en16931:2017`. It is built from the very data and texts the PDF prints (in `lang`), so the two never disagree.',
          'A sales invoice (`s`) is an invoice (type code 380); a correcting invoice (`c`) is a credit note (type code 381) that references the corrected invoice; a purchase invoice (`p`) swaps the parties as the PDF does.',
          `Which field comes from where, and the defaults for data EN 16931 needs that an invoice does not hold (unit codes, VAT categories, countries): ${guides.link('e-invoices')}.`,
          `National formats: \`xrechnung-ubl\` and \`xrechnung-cii\` (XRechnung 3.0), \`peppol\` (Peppol BIS Billing 3.0, UBL), \`cius-ro\` (RO e-Factura CIUS-RO, UBL) and \`ksef\` (the Polish structured invoice FA(3)); each passes the EN 16931 rules and then its official national validation. An invoice that lacks what its format needs (a Leitweg-ID for XRechnung, a county for a Romanian party, a Polish seller for \`ksef\`, ...) is 422 on \`format\`, one message per missing item. Which format each country needs, and what the service does not do (sending to KSeF or ANAF): ${guides.link('e-invoices')}.`,
          'As for the PDF: credentials, rate limit, tenancy (404, even with an invalid query) and validation (422) in that order; a strong `ETag` with `Cache-Control: private, no-cache`, and 304 for a matching `If-None-Match`.',
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
            description: "The client's copy (named in `If-None-Match`) is still this document: no body.",
            headers: responseHeaders([...COUNTED, 'ETag (e-invoice)', 'Cache-Control']),
          },
          '404': errorResponse(404, 'No such invoice for this client, or an id that is not a positive integer.', Messages.INVOICE_NOT_FOUND),
          '422': validationResponse(
            '`format` or `lang` invalid, or sent twice; or the invoice lacks data its national `format` needs (each missing item named).',
            invalidData,
            {
              status: 422,
              message: Messages.INVALID_DATA,
              data: null,
              errors: { format: ['The selected format is invalid.'] },
            },
          ),
          ...commonErrors(),
        },
      },
    },
  };
}
