/** The event types of the change feed and webhooks (contract, "Events"); the names are fixed. */
export const EVENT_TYPES = ['invoice.created', 'invoice.updated', 'invoice.deleted', 'order.file_attached', 'export.succeeded', 'export.failed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A JSON object as a client reads it (an invoice list item, an uploaded-file item). */
export type EventObject = Record<string, unknown>;

export interface EventData {
  object: EventObject;
  /** Only on `invoice.updated`: the list item fields whose values changed, with their values before. */
  previous_attributes?: EventObject;
}

/** One event of a client directory, as the feed and webhooks carry it. */
export interface ChangeEvent {
  /** Grows in the order readers see events (assigned when published, never at the writer's commit). */
  id: number;
  type: EventType;
  /** Unix seconds when the event was published. */
  created: number;
  data: EventData;
}

/** What the publisher decided to write for one captured change; the id and time come when it is stored. */
export interface EventDraft {
  directory: string;
  type: EventType;
  data: EventData;
}
