import type { ChangeEvent } from '../events/event.js';
import type { DeliverySlotBounds } from '../webhooks/delivery-slots.rules.js';
import type { WebhookDelivery, WebhookSecrets } from '../webhooks/webhook-endpoint.js';

/** A due attempt taken by one process, with what sending it needs. */
export interface ClaimedDelivery {
  delivery: Pick<WebhookDelivery, 'id' | 'endpointId' | 'eventId' | 'eventType' | 'attempt'>;
  /** The client directory of the endpoint (its attempts in flight are bounded together). */
  directory: string;
  url: string;
  /** As stored: sealed (or plain, from before encryption); the use case opens them. */
  secrets: WebhookSecrets;
  /** The operator allowed this endpoint's directory private targets (`webhooks:allow-private`). */
  privateTargetsAllowed: boolean;
  /** Since when every attempt to this endpoint failed (seconds); null after a success. */
  failingSince: number | null;
  /** The event to send; null when retention removed it meanwhile. */
  event: ChangeEvent | null;
}

export interface DeliveryOutcome {
  deliveryId: number;
  endpointId: number;
  succeeded: boolean;
  responseStatus: number | null;
  /** What the client is shown: a coarse reason (`connection failed`, `answered 500`, ...). */
  error: string | null;
  /** What the operator is shown (`pnpm cli webhooks:deliveries`): the sender's detail, addresses and ports included. */
  errorDetail: string | null;
  /** A failure with a retry to come: when it is due (a new attempt is scheduled). */
  retryAt: number | null;
  /** Set on a failure: the endpoint's failure streak starts here unless it had begun. */
  failingSince: number | null;
  /** Set when this failure disables the endpoint. */
  disableReason: string | null;
  /** Whether the endpoint's failure streak had begun before this attempt (a success then ends it; a failure leaves its start). */
  endpointWasFailing: boolean;
  now: number;
}

/**
 * The delivery attempts waiting in the database. Claims are leases: an
 * attempt taken by a process that dies is taken again by another once its
 * lease ends, so every event is delivered at least once. An attempt of an
 * endpoint that is no longer enabled fails when it comes due (replay sends
 * the events again once the endpoint is enabled).
 */
export interface WebhookDeliveryQueuePort {
  /**
   * How many claims one process may have in flight at once (1 when absent): more only where claims never take the same
   * attempt (MariaDB's `SKIP LOCKED`), not where writes are one at a time anyway (SQLite).
   */
  readonly claimsInFlight?: number;
  /**
   * Takes up to `limit` due attempts of enabled endpoints for `leaseSeconds`,
   * shared as `shareDeliverySlots` says: each endpoint's oldest first, within
   * the free slots of its endpoint and its directory. An endpoint without a
   * free slot is passed over whatever its backlog.
   */
  claimDue(now: number, bounds: DeliverySlotBounds, leaseSeconds: number): Promise<ClaimedDelivery[]>;
  /** Records what came of attempts, all or none (a failure with a retry schedules the next attempt). */
  record(outcomes: readonly DeliveryOutcome[]): Promise<void>;
  /** Gives claimed attempts that were not sent back before their lease ends: due at `now` again, for any process. */
  release(deliveryIds: readonly number[], now: number): Promise<void>;
  /** Removes up to `limit` finished attempts (succeeded or failed) made before `createdBefore` (seconds); returns how many. */
  removeFinished(createdBefore: number, limit: number): Promise<number>;
}
