import { z } from 'zod';
import { invoiceSchema } from './response.schemas.js';
import { exportSchema } from './export.schemas.js';

/**
 * The events of the feed (and of webhooks), one schema per type. The
 * invoice object is exactly the list item (`Invoice`); `previous_attributes`
 * holds only the fields that changed, with their values before.
 */
const eventBase = {
  id: z.int().min(1).describe('Grows in the order events are published: keep the last one you processed as your cursor (`after`).'),
  created: z.int().nonnegative().describe('When the event was published, Unix seconds, UTC (at most about 2 s after the change was committed).'),
};

export const invoiceCreatedEventSchema = z
  .strictObject({ ...eventBase, type: z.literal('invoice.created'), data: z.strictObject({ object: invoiceSchema }) })
  .describe('An invoice appeared (written through the service or straight into the database).');

export const invoiceUpdatedEventSchema = z
  .strictObject({
    ...eventBase,
    type: z.literal('invoice.updated'),
    data: z.strictObject({
      object: invoiceSchema,
      previous_attributes: invoiceSchema
        .partial()
        .describe('The list item fields whose values changed, each with its value before (`orders` counts as one field); at least one.'),
    }),
  })
  .describe(
    'Something a client sees in the list item changed (status, amounts, orders, ...): one event per invoice per transaction, none for a write that changed nothing visible.',
  );

export const invoiceDeletedEventSchema = z
  .strictObject({
    ...eventBase,
    type: z.literal('invoice.deleted'),
    data: z.strictObject({ object: z.strictObject({ id: z.int(), nr: z.string() }) }),
  })
  .describe('An invoice was removed.');

export const fileAttachedEventSchema = z
  .strictObject({
    ...eventBase,
    type: z.literal('order.file_attached'),
    data: z.strictObject({
      object: z.strictObject({
        id: z.int().describe('File ID.'),
        name: z.string().describe('The file name as uploaded (base name).'),
        category_id: z.int().nullable(),
        order_id: z.int(),
      }),
    }),
  })
  .describe('A file was stored for an order (an upload whose bytes the order already had adds none).');

export const exportSucceededEventSchema = z
  .strictObject({ ...eventBase, type: z.literal('export.succeeded'), data: z.strictObject({ object: exportSchema }) })
  .describe('An export finished: its archive can be downloaded until `expires`.');

export const exportFailedEventSchema = z
  .strictObject({ ...eventBase, type: z.literal('export.failed'), data: z.strictObject({ object: exportSchema }) })
  .describe('An export failed: `error` says why; nothing was kept.');

export const eventSchema = z
  .discriminatedUnion('type', [
    invoiceCreatedEventSchema,
    invoiceUpdatedEventSchema,
    invoiceDeletedEventSchema,
    fileAttachedEventSchema,
    exportSucceededEventSchema,
    exportFailedEventSchema,
  ])
  .describe('One change, as the feed and webhooks carry it.');

export const eventPageSchema = z
  .strictObject({
    events: z.array(eventSchema).describe('Oldest first.'),
    has_more: z.boolean().describe('More events are past `next_after` already: ask again at once.'),
    next_after: z.int().nonnegative().describe('The id of the last event returned, or the `after` sent when none was: the `after` of the next request.'),
  })
  .describe('A page of the change feed.');
