import type { WebhookDelivery, WebhookEndpoint } from '@logi/domain';

/** An endpoint as the client reads it: never its secrets. */
export function toWebhookEndpointDto(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    event_types: endpoint.eventTypes,
    description: endpoint.description,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabledReason,
    created: endpoint.created,
  };
}

/** The creation answer: the endpoint and its secret, shown this once. */
export function toCreatedWebhookEndpointDto(endpoint: WebhookEndpoint, secret: string) {
  return { ...toWebhookEndpointDto(endpoint), secret };
}

export function toWebhookDeliveryDto(delivery: WebhookDelivery) {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    attempt: delivery.attempt,
    status: delivery.status,
    response_status: delivery.responseStatus,
    error: delivery.error,
    created: delivery.created,
    next_attempt_at: delivery.nextAttemptAt,
  };
}

export function toWebhookDeliveriesDto(page: { deliveries: WebhookDelivery[]; hasMore: boolean; nextAfter: number | null }) {
  return { deliveries: page.deliveries.map(toWebhookDeliveryDto), has_more: page.hasMore, next_after: page.nextAfter };
}
