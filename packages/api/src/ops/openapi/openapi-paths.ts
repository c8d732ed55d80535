import { eInvoiceQuerySchema, invoicePdfQuerySchema, listEventsQuerySchema, listInvoicesQuerySchema, Messages, MAX_FILE_BYTES } from '@logi/domain';
import { toJsonSchema } from './json-schema.js';
import { ref } from './openapi-components.js';
import { COUNTED, commonErrors, errorResponse, jsonResponse, responseHeaders, validationResponse } from './openapi-responses.js';
import { queryParameters } from './query-parameters.js';
import { webhookPaths } from './webhook-paths.js';
import { orderByNrQuerySchema, pathIdSchema, uploadBodySchema } from './request.schemas.js';

const pathId = (name: string, what: string) => ({
  name,
  in: 'path',
  required: true,
  description: `${what} ID.`,
  schema: toJsonSchema(pathIdSchema(what), 'input'),
  example: what === 'Order' ? 3001 : 9001,
});

const invalidData = { const: Messages.INVALID_DATA };

const idempotencyKeyParameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: [
    'Makes a retry safe (Stripe\'s semantics): up to 255 visible ASCII characters, chosen by the client (a UUID, say), one per upload; scoped to the client directory, compared exactly.',
    'The first answer that stored something (a 201) is kept for 24 hours and given back, byte for byte, to a retry with the same key and the same request, with `Idempotency-Replayed: true`; nothing is stored again.',
    'The request is the order, `category_id` and each file\'s name and SHA-256, in part order: the same key with another request is 422 naming `Idempotency-Key`.',
    'A retry that arrives while the first request is still running is answered 409 with `Retry-After: 1` at once (it does not wait).',
    'Answers that stored nothing are not kept, so the retry runs again: a validation 422, a 404, `No files were uploaded` (422), a 503 or a 500. An empty value counts as no key.',
  ].join(' '),
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
  example: '5f0c6e2a-3b8e-4a51-9d0e-7c1b2a9f4e11',
};

/** The 201 of an upload: on a replay it also carries `Idempotency-Replayed`. */
function uploadCreatedResponse() {
  const response = jsonResponse('At least one file was stored (or, for `duplicate_of` items, was already attached to the order).', ref('AttachFilesEnvelope'), COUNTED, {
    status: 201,
    message: 'Files uploaded',
    data: { message: 'Files uploaded', order_id: 3001, uploaded: [{ id: 1, name: 'cmr.pdf', category_id: 1 }], failed: [] },
  });
  const replayed = {
    description: 'Sent (`true`) only when this is the kept answer of an earlier request with the same `Idempotency-Key`; nothing was stored by this request.',
    required: false,
    schema: { type: 'string', const: 'true' },
  };
  return { ...response, headers: { ...response.headers, 'Idempotency-Replayed': replayed } };
}

/** The five endpoints of the spec, with every answer they can give. */
export function paths(options: { uploadMaxFiles: number }) {
  const maxBodyMiB = options.uploadMaxFiles * 10 + 1;
  return {
    '/orders/{order_id}/files': {
      post: {
        operationId: 'uploadOrderFiles',
        tags: ['Orders'],
        summary: 'Upload files to an order',
        description: [
          `Multipart upload of 1 to ${options.uploadMaxFiles} files (UPLOAD_MAX_FILES), each 1 byte to ${MAX_FILE_BYTES} bytes (10 MiB, exactly 10 MiB is accepted).`,
          'The order is checked first (404 whatever the body), then every file is validated before any is stored: a request that fails validation stores nothing.',
          'A valid file that cannot be stored (storage down) goes into `failed`; the others are stored (201). If none could be stored: 422 `No files were uploaded` with the payload.',
          'A file whose store job does not finish within `JOB_TIMEOUT_MS` is not stored (the job writes nothing after its deadline): when other files of the request were stored, it is listed in `failed` (send it again); when none was, the answer is 503 with `Retry-After`, and the whole request may be sent again.',
          'The content type of a stored file is sniffed from its bytes; `name` is the client\'s file name reduced to its base name (`file` when nothing is left, as for `..` or `dir/`).',
          'A file whose bytes (SHA-256) are already attached to the same order, by an earlier upload or an earlier part of the same request, is not stored again: its `uploaded` item has the existing file\'s `id` and `category_id`, `duplicate_of` set to that id, and the message adds ` (N already attached)`. On another order the same bytes are stored as usual (no `duplicate_of`). Two uploads of the same bytes to one order at the very same moment may both be stored.',
          'Send an `Idempotency-Key` header to make retries safe (see the parameter): a retry gets the first answer again with `Idempotency-Replayed: true`, stores nothing, and a retry while the first is still running is 409 with `Retry-After`.',
          'File parts of other fields are ignored (not stored, not counted). A `files` part sent as a plain field is 422 `The files.N field must be a file.`; `category_id` `null` (any letter case) or empty means none, and a `category_id` sent as a file is 422.',
        ].join('\n\n'),
        parameters: [pathId('order_id', 'Order'), idempotencyKeyParameter],
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: toJsonSchema(uploadBodySchema(options.uploadMaxFiles), 'input'),
              encoding: { files: { contentType: 'application/octet-stream' } },
            },
          },
        },
        responses: {
          // First, so that its own 400 (a body that cannot be read is one too) replaces the shared one.
          ...commonErrors(),
          '201': uploadCreatedResponse(),
          '400': errorResponse(
            400,
            'A multipart body that cannot be read (bad boundary, truncated), with the message `Bad Request: the multipart body could not be read.`; or a request that is not well-formed HTTP (a control byte in a header, say), `Bad Request`, refused before anything reads it, the connection closed after the answer.',
            [Messages.MULTIPART_UNREADABLE, Messages.BAD_REQUEST],
            [],
          ),
          '404': errorResponse(404, 'No such order for this client (other clients\' orders answer the same).', Messages.ORDER_NOT_FOUND),
          '409': errorResponse(
            409,
            'A request with the same `Idempotency-Key` and the same content is still running; nothing was done. Send it again after `Retry-After` to get its answer.',
            Messages.IDEMPOTENCY_KEY_IN_USE,
            [...COUNTED, 'Retry-After'],
          ),
          '413': errorResponse(413, `The body is over UPLOAD_MAX_FILES x 10 MiB + 1 MiB (${maxBodyMiB} MiB here); cut off early.`, Messages.PAYLOAD_TOO_LARGE, []),
          '422': jsonResponse(
            'Validation failed (no file part: `The files field is required.`; an empty or too large file, too many files, a bad `category_id`: a message naming the field, e.g. `files.2`; an `Idempotency-Key` over 255 characters or with other than visible ASCII, or one already used for a different request: `errors` names `Idempotency-Key`), data null. Or no file could be stored: `No files were uploaded` with the payload as data.',
            { anyOf: [ref('ValidationErrorEnvelope'), { allOf: [ref('NoFilesUploadedEnvelope'), { properties: { message: { const: Messages.NO_FILES_UPLOADED } } }] }] },
            COUNTED,
            { status: 422, message: Messages.FILES_REQUIRED, data: null, errors: { files: [Messages.FILES_REQUIRED] } },
          ),
        },
      },
    },
    '/orders/file-categories': {
      get: {
        operationId: 'listFileCategories',
        tags: ['Orders'],
        summary: 'List file categories',
        description: 'The categories an uploaded file can be tagged with; one list shared by all clients.',
        responses: {
          '200': jsonResponse('Every category.', ref('FileCategoriesEnvelope'), COUNTED, {
            status: 200,
            message: 'OK',
            data: [{ id: 1, name: 'CMR', visible_customer: 1 }],
          }),
          ...commonErrors(),
        },
      },
    },
    '/orders/by-nr': {
      get: {
        operationId: 'findOrderByNr',
        tags: ['Orders'],
        summary: 'Find an order by number',
        description:
          'The first order whose number contains `nr` (trimmed; case-insensitive; `%`, `_` and `\\` are plain characters). An exact (case-insensitive) match wins; otherwise the matching order with the lowest id.',
        parameters: queryParameters(orderByNrQuerySchema, ['nr']),
        responses: {
          '200': jsonResponse('The order.', ref('OrderLookupEnvelope'), COUNTED, { status: 200, message: 'OK', data: { id: 3001, nr: 'ZL/0412/11/2026', ownnr: 'PO-7781' } }),
          '404': errorResponse(404, 'No order of this client matches; the message names the trimmed nr.', {
            // Any characters, line breaks too (`nr=ab%0Acd`): `.` would stop at one.
            pattern: '^Order with given nr \\([\\s\\S]*\\) not found$',
            example: 'Order with given nr (XYZ-1) not found',
          }),
          '422': validationResponse(
            '`nr` missing or empty (`The nr field is required.`), sent twice, or longer than 255 characters.',
            { type: 'string' },
            { status: 422, message: Messages.NR_REQUIRED, data: null, errors: { nr: [Messages.NR_REQUIRED] } },
          ),
          ...commonErrors(),
        },
      },
    },
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
          pathId('invoice_id', 'Invoice'),
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
          pathId('invoice_id', 'Invoice'),
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
    ...webhookPaths(),
    '/events': {
      get: {
        operationId: 'listEvents',
        tags: ['Events'],
        summary: 'Follow the change feed',
        description: [
          'Every change to this client\'s invoices and order files, oldest first: `invoice.created`, `invoice.updated` (with `previous_attributes`), `invoice.deleted`, `order.file_attached`. Changes are captured in the database whoever made them (this API, a worker, the CLI, or another system writing the tables, such as an ERP\'s bulk load); a rolled-back write makes none, and one transaction\'s writes to one invoice make one event.',
          'Keep `next_after` and send it as `after` next time: ids only grow in the order events become visible, so a cursor never skips an event, even when transactions commit in another order than they started, and never sees one twice. While `has_more` is true, ask again at once.',
          'With `wait` (up to 30 s), an answer with no event waits until one arrives for this client (or the time runs out) and then answers: a long poll. An event is in the feed at most about 2 s after its commit (longer behind a bulk load, at the rate in BENCHMARKS.md); two changes to one invoice that reach the feed together may make one event.',
          'Events are kept EVENTS_RETENTION_DAYS (30 by default). When events past `after` were already removed, the answer is 410: resync from `GET /invoices`, then follow the feed from the newest event.',
        ].join('\n\n'),
        parameters: queryParameters(listEventsQuerySchema),
        responses: {
          '200': jsonResponse('A page of events (empty when none is past `after`, after waiting up to `wait`).', ref('EventPageEnvelope'), COUNTED),
          '410': errorResponse(410, 'Events past `after` were removed by retention: resync from the list.', Messages.EVENTS_EXPIRED),
          '422': validationResponse('`after`, `limit`, `types` or `wait` invalid, or sent twice.', invalidData, {
            status: 422,
            message: Messages.INVALID_DATA,
            data: null,
            errors: { types: ['The selected types is invalid.'] },
          }),
          ...commonErrors(),
        },
      },
    },
  };
}

/** The `If-None-Match` request header of a conditional GET. */
function ifNoneMatchHeader(description: string) {
  return { name: 'If-None-Match', in: 'header', required: false, description, schema: { type: 'string' } } as const;
}
