import { listEventsQuerySchema, Messages } from '@logi/domain';
import { ref } from '../ops/openapi/openapi-components.js';
import { COUNTED, commonErrors, errorResponse, jsonResponse, validationResponse } from '../ops/openapi/openapi-responses.js';
import { queryParameters } from '../ops/openapi/query-parameters.js';

/** The OpenAPI side of events.routes.ts: the query parameters are the domain's schema that validates them. */

export const EVENTS_TAG = { name: 'Events', description: 'The change feed: every change to invoices and order files, whoever made it.' };

const invalidData = { const: Messages.INVALID_DATA };

/** The change feed (contract, "Events"). */
export function eventPaths() {
  return {
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
