import type { EventType } from '../events/event.js';

/** A client's webhook endpoint; its secrets never leave the server except on creation and rotation. */
export interface WebhookEndpoint {
  id: number;
  directory: string;
  url: string;
  /** Empty: every type. */
  eventTypes: EventType[];
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  /** Unix seconds. */
  created: number;
}

/** The signing secrets of an endpoint: the current one, and the one it replaced while that still signs. */
export interface WebhookSecrets {
  current: string;
  previous: string | null;
  /** Unix seconds until which `previous` also signs. */
  previousUntil: number | null;
}

/** Whether an endpoint takes events of this type. */
export function endpointWants(eventTypes: readonly string[], type: string): boolean {
  return eventTypes.length === 0 || eventTypes.includes(type);
}

/** The secrets that sign at `now` (seconds): the current one, and the previous one during its overlap. */
export function signingSecrets(secrets: WebhookSecrets, now: number): string[] {
  return secrets.previous !== null && secrets.previousUntil !== null && now < secrets.previousUntil ? [secrets.current, secrets.previous] : [secrets.current];
}

/** How long a rotated-out secret still signs (contract: 24 h). */
export const SECRET_OVERLAP_SECONDS = 24 * 3600;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One attempt to deliver one event to one endpoint. */
export interface WebhookDelivery {
  id: number;
  endpointId: number;
  eventId: number;
  eventType: EventType;
  /** 1 for the first try, then one more per retry. */
  attempt: number;
  status: DeliveryStatus;
  responseStatus: number | null;
  error: string | null;
  /** Unix seconds when the attempt was scheduled (made). */
  created: number;
  /** Pending: when it is due. Failed with a retry to come: when that retry is due. Else null. */
  nextAttemptAt: number | null;
}
