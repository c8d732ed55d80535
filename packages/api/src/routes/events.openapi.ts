import { listEventsQuerySchema, Messages } from '@logi/domain';
import { ref } from '../ops/openapi/openapi-components.js';
import { COUNTED, commonErrors, errorResponse, jsonResponse, validationResponse } from '../ops/openapi/openapi-responses.js';
import type { GuideLinks } from '../ops/openapi/guides.js';
import { queryParameters } from '../ops/openapi/query-parameters.js';

/** The OpenAPI side of events.routes.ts: the query parameters are the domain's schema that validates them. */

export const eventsTag = (guides: GuideLinks) => ({
  name: 'Events',
  description: 'The change feed: every change to invoices and order files, whoever made it.',
  externalDocs: guides.externalDocs('events-and-webhooks', 'Events and webhooks: what makes an event, cursors, retention and resync.'),
});

const invalidData = { const: Messages.INVALID_DATA };

/** The change feed (contract, "Events"). */
export function eventPaths(guides: GuideLinks) {
  return {
    '/events': {
      get: {
        operationId: 'listEvents',
        tags: ['Events'],
        summary: 'Follow the change feed',
        description: [
          "Every change to this client's invoices and order files, oldest first, whoever made it (this API or another system writing the database): `invoice.created`, `invoice.updated` (with `previous_attributes`), `invoice.deleted`, `order.file_attached`.",
          'Keep `next_after` and send it as `after` next time: a cursor never skips an event and never sees one twice. While `has_more` is true, ask again at once. With `wait`, an answer with no event waits until one arrives for this client (or the time runs out): a long poll.',
          'A client may hold EVENTS_MAX_WAITING (5 by default) requests with `wait` > 0 open at once on one API process; one more is 429 `Too many waiting requests.` with `Retry-After: 1`: keep one long poll per consumer and send the next when it is answered.',
          'Events are kept EVENTS_RETENTION_DAYS (30 by default). When events past `after` were already removed, the answer is 410: resync from an export (`POST /exports`), then follow the feed from its `events_cursor`.',
          "After the service was restored from a backup, a cursor past the restored feed's end is 410 `This cursor is from before a restore; resynchronise.`: the events it passed were lost with the restore. Resync the same way; a cursor at or below the restored end goes on as before.",
          `What makes an event, how soon it is in the feed, and how to resync: ${guides.link('events-and-webhooks')}.`,
        ].join('\n\n'),
        parameters: queryParameters(listEventsQuerySchema),
        responses: {
          '200': jsonResponse('A page of events (empty when none is past `after`, after waiting up to `wait`).', ref('EventPageEnvelope'), COUNTED),
          '410': errorResponse(
            410,
            'Events past `after` were removed by retention (`Events after this cursor are no longer kept.`), or `after` is from before a restore of the service (`This cursor is from before a restore; resynchronise.`): resync from an export.',
            [Messages.EVENTS_EXPIRED, Messages.EVENTS_CURSOR_RESTORED],
          ),
          '422': validationResponse('`after`, `limit`, `types` or `wait` invalid, or sent twice.', invalidData, {
            status: 422,
            message: Messages.INVALID_DATA,
            data: null,
            errors: { types: ['The selected types is invalid.'] },
          }),
          ...commonErrors(),
          '429': errorResponse(
            429,
            'Too many requests in this window (`Too Many Attempts.`), or, with `wait` > 0, this client already holds EVENTS_MAX_WAITING long polls on this API process (`Too many waiting requests.`, `Retry-After: 1`).',
            [Messages.TOO_MANY_ATTEMPTS, Messages.TOO_MANY_WAITING_REQUESTS],
            [...COUNTED, 'Retry-After'],
          ),
        },
      },
    },
  };
}
