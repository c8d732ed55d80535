import type { EventType } from '../events/event.js';
import type { WebhookDelivery, WebhookEndpoint } from '../webhooks/webhook-endpoint.js';

export interface NewWebhookEndpoint {
  directory: string;
  url: string;
  eventTypes: EventType[];
  description: string | null;
  secret: string;
  created: number;
}

export interface WebhookEndpointChanges {
  url?: string;
  eventTypes?: EventType[];
  description?: string | null;
  /** true also clears `disabled_reason` and the failure streak. */
  enabled?: boolean;
}

/** A client directory's webhook endpoints and their delivery attempts; another directory's ids behave as missing. */
export interface WebhookEndpointRepositoryPort {
  /** Creates the endpoint unless the directory already has `max`; null then. */
  create(endpoint: NewWebhookEndpoint, max: number): Promise<WebhookEndpoint | null>;
  list(directory: string): Promise<WebhookEndpoint[]>;
  find(directory: string, id: number): Promise<WebhookEndpoint | null>;
  update(directory: string, id: number, changes: WebhookEndpointChanges): Promise<WebhookEndpoint | null>;
  /** Removes the endpoint and its attempts; false when there was none. */
  remove(directory: string, id: number): Promise<boolean>;
  /** The new secret signs from now on; the current one also signs until `previousUntil` (seconds). */
  rotateSecret(directory: string, id: number, secret: string, previousUntil: number): Promise<boolean>;
  /** Attempts, newest first, with an id below `before` (all when null). */
  listDeliveries(directory: string, endpointId: number, before: number | null, limit: number): Promise<WebhookDelivery[]>;
  /**
   * Schedules a new first attempt, due now, of every kept event of the directory past `afterEventId` the endpoint
   * takes, and returns how many; or, while an earlier replay of the endpoint is still being sent (a first attempt it
   * queued has not been made, or it is still queueing), schedules nothing and returns `'running'`. Holds across processes.
   */
  replay(directory: string, endpointId: number, afterEventId: number, now: number): Promise<number | 'running'>;
}
