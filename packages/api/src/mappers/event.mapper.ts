import type { ChangeEvent, EventPage } from '@logi/domain';

/** An event as the feed and webhooks carry it, field by field. */
export function toEventDto(event: ChangeEvent) {
  return {
    id: event.id,
    type: event.type,
    created: event.created,
    data: {
      object: event.data.object,
      // Only on invoice.updated.
      ...(event.data.previous_attributes === undefined ? {} : { previous_attributes: event.data.previous_attributes }),
    },
  };
}

export function toEventPageDto(page: EventPage) {
  return { events: page.events.map(toEventDto), has_more: page.hasMore, next_after: page.nextAfter };
}
