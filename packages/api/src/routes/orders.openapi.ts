import { z } from 'zod';
import { createFileLinkSchema, MAX_FILE_BYTES, Messages } from '@logi/domain';
import { toJsonSchema } from '../ops/openapi/json-schema.js';
import { ref } from '../ops/openapi/openapi-components.js';
import { COUNTED, commonErrors, errorResponse, jsonResponse, responseHeaders, validationResponse } from '../ops/openapi/openapi-responses.js';
import { queryParameters } from '../ops/openapi/query-parameters.js';
import type { GuideLinks } from '../ops/openapi/guides.js';
import { pathIdParameter } from '../ops/openapi/request.schemas.js';
import { REPLAYED_HEADER } from '../middleware/idempotency.middleware.js';
import { idempotencyKeyInUse, idempotencyKeyParameter, replayedHeader } from '../ops/openapi/openapi-idempotency.js';
import { bodyErrors } from './webhook-endpoints.openapi.js';

/**
 * The OpenAPI side of orders.routes.ts. The `nr` lookup and the multipart
 * body are checked by hand-written rules (the domain's find-order-by-nr and
 * upload-rules), so their shapes are written here once, in the words of those rules.
 */

export const ordersTag = (guides: GuideLinks) => ({
  name: 'Orders',
  description: "Order lookup, file categories, file uploads, and the order's files out (list, download, links).",
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
  return { ...response, headers: { ...response.headers, [REPLAYED_HEADER]: replayedHeader('stored') } };
}

/** A header of a conditional or ranged download request; only the 64 KiB of header fields bound it. */
function downloadHeader(name: 'If-None-Match' | 'Range' | 'If-Range', description: string) {
  const schema = { type: 'string', 'x-bounded-by': 'No length limit of its own: the 64 KiB of header fields bound it (431).' };
  return { name, in: 'header', required: false, description, schema } as const;
}

const fileBinary = { '*/*': { schema: { type: 'string', format: 'binary' } } };

/** The answers of a file download, by the API or by one of its file links: the bytes (200, 206), 304, 416. */
export function fileDownloadResponses() {
  const limit = COUNTED;
  const body = [...limit, 'Content-Disposition (file)', 'ETag (file)', 'Accept-Ranges', 'Content-Length', 'Cache-Control'] as const;
  return {
    '200': {
      description: 'The whole file, streamed, with the media type sniffed at upload as `Content-Type`.',
      headers: responseHeaders(body),
      content: fileBinary,
    },
    '206': {
      description:
        'One byte range of the file (`Range: bytes=a-b`, `a-` or `-n`), with `Content-Range`. Several ranges in one request are not served: the whole file comes with 200.',
      headers: responseHeaders([...body, 'Content-Range']),
      content: fileBinary,
    },
    '304': {
      description: "`If-None-Match` names this file's `ETag`: the client holds these bytes; no body.",
      headers: responseHeaders([...limit, 'ETag (file)', 'Accept-Ranges', 'Cache-Control']),
    },
    '416': errorResponse(
      416,
      'The range starts past the end of the file (or asks for the last 0 bytes); `Content-Range` gives the size.',
      'Range Not Satisfiable',
      [...limit, 'Content-Range (416)', 'ETag (file)', 'Accept-Ranges', 'Cache-Control'],
    ),
  };
}

function downloadParameters() {
  return [
    downloadHeader('If-None-Match', "The `ETag` of an earlier download (or several, or `*`): when it is this file's, 304 with no body."),
    downloadHeader(
      'Range',
      'One byte range, `bytes=a-b`, `bytes=a-` or `bytes=-n` (the last n bytes): 206 with those bytes. Several ranges, another unit or a malformed value: ignored, 200 with the whole file.',
    ),
    downloadHeader('If-Range', "The `ETag` the client's partial copy came with: the range is served only while it still matches, else the whole file (200)."),
  ];
}

/** The order calls of the spec: upload, file categories, lookup by number; and the order's files out. */
export function orderPaths(options: { uploadMaxFiles: number }, guides: GuideLinks) {
  const maxBodyMiB = options.uploadMaxFiles * 10 + 1;
  return {
    '/orders/{order_id}/files': {
      get: {
        operationId: 'listOrderFiles',
        tags: ['Orders'],
        summary: "List an order's files",
        description: `Every file attached to the order, oldest first, with its size, the media type sniffed at upload and the SHA-256 of its bytes. Downloads and links: ${guides.link('files')}.`,
        parameters: [pathIdParameter('order_id', 'Order', 3001)],
        responses: {
          '200': jsonResponse("The order's files (an empty list when it has none).", ref('OrderFileListEnvelope'), COUNTED, {
            status: 200,
            message: 'OK',
            data: [
              {
                id: 17,
                name: 'CMR 0412.pdf',
                category_id: 1,
                size: 48213,
                content_type: 'application/pdf',
                sha256: '2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae',
                created: 1764151200,
              },
            ],
          }),
          '404': errorResponse(404, "No such order for this client (other clients' orders answer the same).", Messages.ORDER_NOT_FOUND),
          ...commonErrors(),
        },
      },
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
        parameters: [pathIdParameter('order_id', 'Order', 3001), idempotencyKeyParameter(guides, 'uploads')],
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
          '409': idempotencyKeyInUse(),
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
    '/orders/{order_id}/files/{file_id}': {
      get: {
        operationId: 'downloadOrderFile',
        tags: ['Orders'],
        summary: 'Download a file of an order',
        description: [
          "The stored bytes, streamed, with the file's name in `Content-Disposition` and its SHA-256 as a strong `ETag`; `If-None-Match` gives 304, one `Range` gives 206 (resumable downloads), a range past the end 416 with the size.",
          `Credentials, rate limit and tenancy come first: another directory's order is \`Order not found\`, a file of another order (or directory) \`File not found\`. ${guides.link('files')}.`,
        ].join('\n\n'),
        parameters: [pathIdParameter('order_id', 'Order', 3001), pathIdParameter('file_id', 'File', 17), ...downloadParameters()],
        responses: {
          ...fileDownloadResponses(),
          '404': errorResponse(404, 'No such order (`Order not found`), or no such file on it (`File not found`), for this client.', [
            Messages.ORDER_NOT_FOUND,
            Messages.FILE_NOT_FOUND,
          ]),
          ...commonErrors(),
        },
      },
    },
    '/orders/{order_id}/files/{file_id}/link': {
      post: {
        operationId: 'createOrderFileLink',
        tags: ['Orders'],
        summary: 'Make a link to a file',
        description: [
          'A URL that anyone holding it can GET, without credentials, until `expires`: to hand a file to a person or a system that has no API key (the Stripe file-link model). Ranges and `If-None-Match` work on it as on the download.',
          'With S3 storage it is a presigned S3 URL (S3_PUBLIC_ENDPOINT sets the address it names); with local files, an API URL `/v1/file-links/{token}` signed by the service. After `expires` it answers a 4xx (S3: 403; the API: 410). An API link also ends (410) when the API key that made it is revoked or expires; a presigned S3 link lives its `ttl` whatever happens to the key: keep `ttl` short.',
          `The body is optional; one that is sent must be a JSON object. ${guides.link('files')}.`,
        ].join('\n\n'),
        parameters: [pathIdParameter('order_id', 'Order', 3001), pathIdParameter('file_id', 'File', 17)],
        requestBody: { required: false, content: { 'application/json': { schema: toJsonSchema(createFileLinkSchema, 'input'), example: { ttl: 3600 } } } },
        responses: {
          ...commonErrors(),
          '201': {
            ...jsonResponse(
              'The link; `Cache-Control: no-store`, as the URL is a credential for the file.',
              ref('FileLinkEnvelope'),
              [...COUNTED, 'Cache-Control (no-store)'],
              {
                status: 201,
                message: 'File link created',
                data: { url: 'https://api.example.com/v1/file-links/WzEsMTcsImJhbHRpYyIsMTc2NDE1MjEwMF0.Zm9v', expires: 1764152100 },
              },
            ),
          },
          ...bodyErrors,
          '404': errorResponse(404, 'No such order (`Order not found`), or no such file on it (`File not found`), for this client.', [
            Messages.ORDER_NOT_FOUND,
            Messages.FILE_NOT_FOUND,
          ]),
          '422': validationResponse(
            '`ttl` is not an integer from 1 to 604800 (`errors.ttl`), or the body is not a JSON object (`errors.body`).',
            { const: Messages.INVALID_DATA },
            { status: 422, message: Messages.INVALID_DATA, data: null, errors: { ttl: ['The ttl field must not be greater than 604800.'] } },
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
