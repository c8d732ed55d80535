import { z } from 'zod';
import { IDEMPOTENCY_HEADER, MAX_FILE_BYTES, Messages } from '@logi/domain';
import { toJsonSchema } from '../ops/openapi/json-schema.js';
import { ref } from '../ops/openapi/openapi-components.js';
import { COUNTED, commonErrors, errorResponse, jsonResponse, validationResponse } from '../ops/openapi/openapi-responses.js';
import { queryParameters } from '../ops/openapi/query-parameters.js';
import type { GuideLinks } from '../ops/openapi/guides.js';
import { pathIdParameter } from '../ops/openapi/request.schemas.js';
import { REPLAYED_HEADER } from './orders.routes.js';

/**
 * The OpenAPI side of orders.routes.ts. The `nr` lookup and the multipart
 * body are checked by hand-written rules (the domain's find-order-by-nr and
 * upload-rules), so their shapes are written here once, in the words of those rules.
 */

export const ordersTag = (guides: GuideLinks) => ({
  name: 'Orders',
  description: 'Order lookup, file categories and file uploads.',
  externalDocs: guides.externalDocs('uploads', 'Uploads: parts, limits, duplicates and safe retries.'),
});

export const orderByNrQuerySchema = z.object({
  nr: z
    .string()
    .min(1)
    .max(255)
    // Trimmed first: a value of spaces only is missing (422).
    .regex(/\S/)
    .meta({ description: 'An order number or a fragment of one; trimmed (a value of spaces only is missing), matched literally and case-insensitively.' }),
});

// A binary string's length is its bytes: an empty file, or one over 10 MiB, is a 422.
const binaryFile = z
  .string()
  .min(1)
  .max(MAX_FILE_BYTES)
  .meta({ format: 'binary', contentMediaType: 'application/octet-stream', description: `One file, 1 byte to ${MAX_FILE_BYTES} bytes (10 MiB).` });

export const uploadBodySchema = (maxFiles: number) =>
  z.object({
    files: z
      .array(binaryFile)
      .min(1)
      .max(maxFiles)
      .meta({ description: `One part per file, all named \`files\` (\`files[]\` is accepted too); 1 to ${maxFiles} files.` }),
    category_id: z.int().min(1).nullable().optional().meta({
      description: 'A file category id (GET /orders/file-categories). Absent, empty or `null`: no category; any other value must be an existing id (else 422).',
    }),
  });

// What the key does; what is kept, for how long, and what a retry gets is the uploads guide's.
const idempotencyKeyParameter = (guides: GuideLinks) => ({
  name: IDEMPOTENCY_HEADER,
  in: 'header',
  required: false,
  description: [
    'Makes a retry of this upload safe: a key the client chooses (a UUID, say), one per upload, scoped to the client directory and compared exactly; an empty value counts as no key.',
    'A retry with the same key and the same request gets the first answer again, with `Idempotency-Replayed: true`, and stores nothing; the same key with another request is 422, a retry while the first still runs 409.',
    `What is kept, for how long, and which answers are not: ${guides.link('uploads')}.`,
  ].join(' '),
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' },
  example: '5f0c6e2a-3b8e-4a51-9d0e-7c1b2a9f4e11',
});

/** The 201 of an upload: on a replay it also carries `Idempotency-Replayed`. */
function uploadCreatedResponse() {
  const response = jsonResponse(
    'At least one file was stored (or, for `duplicate_of` items, was already attached to the order).',
    ref('AttachFilesEnvelope'),
    COUNTED,
    {
      status: 201,
      message: 'Files uploaded',
      data: { message: 'Files uploaded', order_id: 3001, uploaded: [{ id: 1, name: 'cmr.pdf', category_id: 1 }], failed: [] },
    },
  );
  const replayed = {
    description: 'Sent (`true`) only when this is the kept answer of an earlier request with the same `Idempotency-Key`; nothing was stored by this request.',
    required: false,
    schema: { type: 'string', const: 'true' },
  };
  return { ...response, headers: { ...response.headers, [REPLAYED_HEADER]: replayed } };
}

/** The order calls of the spec: upload, file categories, lookup by number. */
export function orderPaths(options: { uploadMaxFiles: number }, guides: GuideLinks) {
  const maxBodyMiB = options.uploadMaxFiles * 10 + 1;
  return {
    '/orders/{order_id}/files': {
      post: {
        operationId: 'uploadOrderFiles',
        tags: ['Orders'],
        summary: 'Upload files to an order',
        description: [
          `Attaches 1 to ${options.uploadMaxFiles} files (UPLOAD_MAX_FILES) to an order in one multipart request; the body's schema gives each file's size.`,
          'The order is checked first (404 whatever the body), then every file is validated before any is stored: a request that fails validation stores nothing.',
          'Each valid file is stored or listed in `failed` with the reason: 201 when at least one was stored, 422 `No files were uploaded` with the payload when none could be. A store job that does not finish within `JOB_TIMEOUT_MS` writes nothing: its file is in `failed` (send it again), or, when no file of the request was stored, the answer is 503 with `Retry-After` and the whole request may be sent again.',
          "Bytes already attached to this order are not stored again (the item's `duplicate_of`), and an `Idempotency-Key` makes a retry of the whole request safe.",
          "With UPLOAD_QUOTA_MB_PER_DAY set, the files take from the client's daily quota (MiB per calendar day in APP_TIMEZONE) in part order: a file that would pass it is in `failed` with `Daily upload quota exceeded.` and the others are stored; duplicates count nothing.",
          `Part names, file names and content types, duplicates and retries: ${guides.link('uploads')}.`,
        ].join('\n\n'),
        parameters: [pathIdParameter('order_id', 'Order', 3001), idempotencyKeyParameter(guides)],
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
          '404': errorResponse(404, "No such order for this client (other clients' orders answer the same).", Messages.ORDER_NOT_FOUND),
          '409': errorResponse(
            409,
            'A request with the same `Idempotency-Key` and the same content is still running; nothing was done. Send it again after `Retry-After` to get its answer.',
            Messages.IDEMPOTENCY_KEY_IN_USE,
            [...COUNTED, 'Retry-After'],
          ),
          '413': errorResponse(
            413,
            `The body is over UPLOAD_MAX_FILES x 10 MiB + 1 MiB (${maxBodyMiB} MiB here); cut off early.`,
            Messages.PAYLOAD_TOO_LARGE,
            [],
          ),
          '422': jsonResponse(
            'Validation failed (no file part: `The files field is required.`; an empty or too large file, too many files, a bad `category_id`: a message naming the field, e.g. `files.2`; an `Idempotency-Key` that breaks its pattern, or one already used for a different request: `errors` names `Idempotency-Key`), data null. Or no file could be stored: `No files were uploaded` with the payload as data.',
            {
              anyOf: [
                ref('ValidationErrorEnvelope'),
                { allOf: [ref('NoFilesUploadedEnvelope'), { properties: { message: { const: Messages.NO_FILES_UPLOADED } } }] },
              ],
            },
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
          'The first order whose number contains `nr` (read as the parameter says): an exact (case-insensitive) match wins, otherwise the matching order with the lowest id.',
        parameters: queryParameters(orderByNrQuerySchema, ['nr']),
        responses: {
          '200': jsonResponse('The order.', ref('OrderLookupEnvelope'), COUNTED, {
            status: 200,
            message: 'OK',
            data: { id: 3001, nr: 'ZL/0412/11/2026', ownnr: 'PO-7781' },
          }),
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
  };
}
