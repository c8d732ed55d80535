import { Messages } from '@logi/domain';
import { COUNTED, errorResponse } from '../ops/openapi/openapi-responses.js';
import type { GuideLinks } from '../ops/openapi/guides.js';
import { fileDownloadResponses } from './orders.openapi.js';

/** The OpenAPI side of file-links.routes.ts: a download whose credential is the token in its path. */
export function fileLinkPaths(guides: GuideLinks) {
  return {
    '/file-links/{token}': {
      get: {
        operationId: 'openFileLink',
        tags: ['Orders'],
        summary: 'Open a file link',
        description: [
          'The file a link made by `POST /orders/{order_id}/files/{file_id}/link` grants, as the download answers it (ranges, `If-None-Match`). No credentials: the signed token in the path is the credential; requests are counted against the rate limit per IP. Only links of the embedded profile (local files) point here; with S3 storage links are presigned S3 URLs.',
          `An altered or foreign token is 403 \`Invalid file link\`; a genuine one past its \`expires\` 410 \`File link expired\`; one whose API key (the key that made it) was revoked or has expired since, 410 \`File link revoked\`; a file removed since, 404. ${guides.link('files')}.`,
        ].join('\n\n'),
        security: [],
        parameters: [
          {
            name: 'token',
            in: 'path',
            required: true,
            description: 'The signed token, as the link gives it.',
            schema: {
              type: 'string',
              pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
              // Any other token, of any length, is one this service did not sign: 403.
              'x-bounded-by': 'No length limit of its own: the request line bounds it (414); a token the service did not sign is a 403.',
            },
          },
        ],
        responses: {
          ...fileDownloadResponses(),
          '400': { $ref: '#/components/responses/BadRequest' },
          '403': errorResponse(403, 'The token was not made by this service, or was altered.', Messages.FILE_LINK_INVALID),
          '404': errorResponse(404, 'The file was removed after the link was made.', Messages.FILE_NOT_FOUND),
          '405': errorResponse(405, 'The path takes GET and HEAD only; `Allow` lists them.', Messages.METHOD_NOT_ALLOWED, ['Allow']),
          '410': errorResponse(410, 'The link has expired, or the API key that made it was revoked or has expired.', [
            Messages.FILE_LINK_EXPIRED,
            Messages.FILE_LINK_REVOKED,
          ]),
          '429': errorResponse(429, 'Too many requests from this IP address in this window.', Messages.TOO_MANY_ATTEMPTS, [...COUNTED, 'Retry-After']),
          '414': { $ref: '#/components/responses/UriTooLong' },
          '431': { $ref: '#/components/responses/HeaderFieldsTooLarge' },
          '500': errorResponse(500, 'Something unexpected; the details are logged with the request id and never sent.', Messages.SERVER_ERROR, []),
          '503': errorResponse(503, 'The database or the file storage does not answer; try again after `Retry-After`.', Messages.SERVICE_UNAVAILABLE, [
            'Retry-After',
          ]),
        },
      },
    },
  };
}
