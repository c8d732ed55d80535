import { createExportSchema, Messages } from '@logi/domain';
import { toJsonSchema } from '../ops/openapi/json-schema.js';
import { ref } from '../ops/openapi/openapi-components.js';
import { COUNTED, commonErrors, errorResponse, jsonResponse, responseHeaders, validationResponse } from '../ops/openapi/openapi-responses.js';
import type { GuideLinks } from '../ops/openapi/guides.js';
import { pathIdParameter } from '../ops/openapi/request.schemas.js';
import { bodyErrors } from './webhook-endpoints.openapi.js';

/** The OpenAPI side of exports.routes.ts: the body is the domain's schema that validates it. */

export const exportsTag = (guides: GuideLinks) => ({
  name: 'Exports',
  description: "Many invoices' documents in one ZIP archive, made by a worker, joined to the change feed by `events_cursor`.",
  externalDocs: guides.externalDocs('exports', 'Exports: the archive, and the export-then-follow pattern.'),
});

const exportId = pathIdParameter('export_id', 'Export', 1);
const notFound = errorResponse(404, 'No such export for this client (or it was deleted), or an id that is not a positive integer.', 'Export not found');
const archiveHeaders = {
  ETag: { description: 'The archive SHA-256 (hex), quoted: the export’s `sha256`.', required: true, schema: { type: 'string', pattern: '^"[0-9a-f]{64}"$' } },
  'Accept-Ranges': { description: 'Byte ranges are served.', required: true, schema: { type: 'string', const: 'bytes' } },
  'Content-Disposition': { description: '`attachment; filename="export-<id>.zip"`.', required: true, schema: { type: 'string' } },
};

/** Exports (contract, "Exports"). */
export function exportPaths(guides: GuideLinks) {
  return {
    '/exports': {
      get: {
        operationId: 'listExports',
        tags: ['Exports'],
        summary: 'List exports',
        description: "This client's exports, newest first, at most 100.",
        responses: { '200': jsonResponse('The newest exports.', ref('ExportListEnvelope'), COUNTED), ...commonErrors() },
      },
      post: {
        operationId: 'createExport',
        tags: ['Exports'],
        summary: 'Export invoices and their documents into one archive',
        description: [
          'Queues an export of every invoice matching `filters` (the list’s query parameters, as strings, without `page`, `per_page`, `sort_by`, `sort_dir`), in the list’s default order: a ZIP with `manifest.json`, `invoices.csv` (unless `csv` is false) and, per invoice, the chosen `documents` (`pdf/<id>.pdf`, `facturx/<id>.pdf`, `ubl/<id>.xml`, `cii/<id>.xml`), each exactly what the single-invoice endpoint answers.',
          'The answer already carries `events_cursor`, the change feed’s end at this moment: import the archive, then follow `GET /events?after=<events_cursor>`, and no change made meanwhile is missed.',
          'More matching invoices than EXPORT_MAX_INVOICES (10,000): 422 on `filters`. More than EXPORT_MAX_ACTIVE (2) exports of this client queued or running: 429 `Too many exports in progress.` with `Retry-After`.',
          'Kept archives (succeeded, not yet expired) of this client reaching EXPORT_STORAGE_MB_PER_DIRECTORY (2048 MiB): 429 `Export storage quota exceeded.` with `Retry-After` the seconds until the oldest kept archive expires (delete one to make room sooner). Queued and running exports have no size yet: the budget is checked again when an archive is finished, and one that would not fit is not kept (the export fails with `Storage failed.`).',
          `Follow it with \`GET /exports/{export_id}\` (or the \`export.succeeded\` / \`export.failed\` events), then download it: ${guides.link('exports')}.`,
        ].join('\n\n'),
        requestBody: { required: false, content: { 'application/json': { schema: toJsonSchema(createExportSchema, 'input') } } },
        responses: {
          '202': {
            ...jsonResponse('Queued.', ref('ExportAcceptedEnvelope'), COUNTED),
            headers: { ...responseHeaders(COUNTED), Location: { description: 'The export.', required: true, schema: { type: 'string' } } },
          },
          '422': validationResponse(
            'A member is invalid: `errors` names it (`filters.period`, `filters.page` for a parameter not allowed there, `documents`, `lang`, `duplicate`, `csv`; `filters` when too many invoices match; `body` when the body is not a JSON object).',
            { const: Messages.INVALID_DATA },
            { status: 422, message: Messages.INVALID_DATA, data: null, errors: { 'filters.period': ['The selected period is invalid.'] } },
          ),
          ...commonErrors(),
          '429': errorResponse(
            429,
            'Too many requests in this window (`Too Many Attempts.`), this client already has EXPORT_MAX_ACTIVE exports queued or running (`Too many exports in progress.`), or its kept archives reach EXPORT_STORAGE_MB_PER_DIRECTORY (`Export storage quota exceeded.`, `Retry-After` until the oldest expires).',
            [Messages.TOO_MANY_ATTEMPTS, 'Too many exports in progress.', 'Export storage quota exceeded.'],
            [...COUNTED, 'Retry-After'],
          ),
          ...bodyErrors,
        },
      },
    },
    '/exports/{export_id}': {
      get: {
        operationId: 'getExport',
        tags: ['Exports'],
        summary: 'Read an export',
        description: 'Its status and progress (`done` of `total`); once succeeded, the archive’s `size`, `sha256` and `expires`; once failed, `error`.',
        parameters: [exportId],
        responses: { '200': jsonResponse('The export.', ref('ExportEnvelope'), COUNTED), '404': notFound, ...commonErrors() },
      },
      delete: {
        operationId: 'deleteExport',
        tags: ['Exports'],
        summary: 'Cancel or delete an export',
        description: 'Cancels a queued or running export (its worker stops) and removes it and its archive; afterwards the export is 404.',
        parameters: [exportId],
        responses: { '200': jsonResponse('Deleted; `data` is null.', ref('DeletedEnvelope'), COUNTED), '404': notFound, ...commonErrors() },
      },
    },
    '/exports/{export_id}/download': {
      get: {
        operationId: 'downloadExport',
        tags: ['Exports'],
        summary: 'Download an export’s archive',
        description:
          'The ZIP archive, `ETag` its SHA-256; one `Range: bytes=a-b` gives 206 (resume a broken download), a range past the end 416; `If-None-Match` with the ETag 304. Before the export succeeded: 409; after `expires`: 410.',
        parameters: [exportId],
        responses: {
          '200': {
            description: 'The archive.',
            headers: { ...responseHeaders([...COUNTED, 'Cache-Control']), ...archiveHeaders },
            content: { 'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip', format: 'binary' } } },
          },
          '206': {
            description: 'One range of the archive, with `Content-Range`.',
            headers: {
              ...responseHeaders([...COUNTED, 'Cache-Control']),
              ...archiveHeaders,
              'Content-Range': { description: '`bytes a-b/size`.', required: true, schema: { type: 'string' } },
            },
            content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
          },
          '304': { description: 'The client holds this archive (its `If-None-Match`).', headers: responseHeaders([...COUNTED, 'Cache-Control']) },
          '404': notFound,
          '409': errorResponse(409, 'The export has not succeeded (queued, running or failed).', 'Export is not ready.'),
          '410': errorResponse(410, 'The archive was removed after `expires`.', 'Export has expired.'),
          '416': errorResponse(416, 'The range starts past the end; `Content-Range: bytes */<size>`.', 'Range Not Satisfiable'),
          ...commonErrors(),
        },
      },
    },
  };
}
