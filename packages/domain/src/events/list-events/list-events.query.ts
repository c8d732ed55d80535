import { z } from 'zod';
import { ValidationError } from '../../shared/common.errors.js';
import { readSingleValues } from '../../shared/query-params.js';
import { enumField, integerField, listField } from '../../shared/query-fields.js';
import { fieldErrorsFromZod } from '../../shared/zod-errors.js';
import { EVENT_TYPES, type EventType } from '../event.js';

export const EVENTS_MAX_LIMIT = 500;
export const EVENTS_DEFAULT_LIMIT = 100;
export const EVENTS_MAX_WAIT_SECONDS = 30;

/** The query of GET /events; one schema for validation and the OpenAPI document. */
export const listEventsQuerySchema = z.object({
  after: integerField('after', 0)
    .optional()
    .meta({ description: 'Return events with an id above this one: the `next_after` of the previous answer (0 = from the oldest kept).', default: 0 }),
  limit: integerField('limit', 1, EVENTS_MAX_LIMIT).optional().meta({ description: 'Events per answer.', default: EVENTS_DEFAULT_LIMIT }),
  types: listField('types', enumField('types', EVENT_TYPES))
    .optional()
    .meta({ description: `Only these event types, comma-separated: ${EVENT_TYPES.map((type) => `\`${type}\``).join(', ')}. All when absent.` }),
  wait: integerField('wait', 0, EVENTS_MAX_WAIT_SECONDS)
    .optional()
    .meta({ description: 'Long poll: when no event is past `after`, wait up to this many seconds for one before answering.', default: 0 }),
});

export interface ListEventsQuery {
  after: number;
  limit: number;
  types: EventType[];
  waitSeconds: number;
}

export function parseListEventsQuery(pairs: Iterable<[string, string]>): ListEventsQuery {
  const { values, errors } = readSingleValues(pairs, Object.keys(listEventsQuerySchema.shape));
  const parsed = listEventsQuerySchema.safeParse(values);
  const allErrors = { ...(parsed.success ? {} : fieldErrorsFromZod(parsed.error)), ...errors };
  if (!parsed.success || Object.keys(allErrors).length > 0) throw ValidationError.invalidData(allErrors);
  return {
    after: parsed.data.after ?? 0,
    limit: parsed.data.limit ?? EVENTS_DEFAULT_LIMIT,
    types: parsed.data.types ?? [],
    waitSeconds: parsed.data.wait ?? 0,
  };
}
