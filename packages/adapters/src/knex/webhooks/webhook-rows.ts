import type { PendingDeliveryRow } from './pending-deliveries.js';
import type { EventType, WebhookDelivery, WebhookEndpoint } from '@logi/domain';

export const ENDPOINT_COLUMNS = ['id', 'directory', 'url', 'event_types', 'description', 'enabled', 'disabled_reason', 'created'] as const;
export const DELIVERY_COLUMNS = [
  'id',
  'endpoint_id',
  'event_id',
  'event_type',
  'attempt',
  'status',
  'response_status',
  'error',
  'created',
  'next_attempt_at',
] as const;

export function toEndpoint(row: Record<string, unknown>): WebhookEndpoint {
  return {
    id: Number(row.id),
    directory: String(row.directory),
    url: String(row.url),
    eventTypes: JSON.parse(String(row.event_types)) as EventType[],
    description: row.description == null ? null : String(row.description),
    enabled: Number(row.enabled) === 1,
    disabledReason: row.disabled_reason == null ? null : String(row.disabled_reason),
    created: Number(row.created),
  };
}

export function toDelivery(row: Record<string, unknown>): WebhookDelivery {
  return {
    id: Number(row.id),
    endpointId: Number(row.endpoint_id),
    eventId: Number(row.event_id),
    eventType: String(row.event_type) as EventType,
    attempt: Number(row.attempt),
    status: String(row.status) as WebhookDelivery['status'],
    responseStatus: row.response_status == null ? null : Number(row.response_status),
    error: row.error == null ? null : String(row.error),
    created: Number(row.created),
    nextAttemptAt: row.next_attempt_at == null ? null : Number(row.next_attempt_at),
  };
}

/** The first attempt of an event for an endpoint, due at once. */
export function firstAttempt(endpointId: number, event: { id: number; type: string }, now: number): PendingDeliveryRow {
  return { endpoint_id: endpointId, event_id: event.id, event_type: event.type, attempt: 1, status: 'pending', created: now, next_attempt_at: now };
}
