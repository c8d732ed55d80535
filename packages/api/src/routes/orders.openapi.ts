import { z } from 'zod';
import { MAX_FILE_BYTES, Messages } from '@logi/domain';
import { toJsonSchema } from '../ops/openapi/json-schema.js';
import { ref } from '../ops/openapi/openapi-components.js';
import { COUNTED, commonErrors, errorResponse, jsonResponse, validationResponse } from '../ops/openapi/openapi-responses.js';
import { queryParameters } from '../ops/openapi/query-parameters.js';
import { pathIdParameter } from '../ops/openapi/request.schemas.js';

/**
 * The OpenAPI side of orders.routes.ts. The `nr` lookup and the multipart
 * body are checked by hand-written rules (the domain's find-order-by-nr and
 * upload-rules), so their shapes are written here once, in the words of those rules.
 */

export const ORDERS_TAG = { name: 'Orders', description: 'Order lookup, file categories and file uploads.' };

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
    category_id: z
      .int()
      .min(1)
      .nullable()
      .optional()
      .meta({ description: 'A file category id (GET /orders/file-categories). Absent, empty or `null`: no category; any other value must be an existing id (else 422).' }),
  });

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

/** The order calls of the spec: upload, file categories, lookup by number. */
export function orderPaths(options: { uploadMaxFiles: number }) {
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
        parameters: [pathIdParameter('order_id', 'Order', 3001), idempotencyKeyParameter],
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
  };
}
