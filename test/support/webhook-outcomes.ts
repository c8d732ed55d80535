import type { ClaimedDelivery, DeliveryOutcome } from '@logi/domain';

/** What a delivery attempt answered with 204 records: succeeded now, nothing to retry, the endpoint healthy. */
export function succeededOutcome(claimed: ClaimedDelivery): DeliveryOutcome {
  return {
    deliveryId: claimed.delivery.id,
    endpointId: claimed.delivery.endpointId,
    succeeded: true,
    responseStatus: 204,
    error: null,
    errorDetail: null,
    retryAt: null,
    failingSince: null,
    disableReason: null,
    endpointWasFailing: false,
    now: Math.floor(Date.now() / 1000),
  };
}

/** What a first failure (the endpoint answered 500) records at `now`: failed, its retry due at `retryAt`, the endpoint's failure streak starting now. */
export function answered500Outcome(claimed: Pick<ClaimedDelivery, 'delivery'>, now: number, retryAt: number): DeliveryOutcome {
  return {
    deliveryId: claimed.delivery.id,
    endpointId: claimed.delivery.endpointId,
    succeeded: false,
    responseStatus: 500,
    error: 'answered 500',
    errorDetail: 'The endpoint answered 500.',
    retryAt,
    failingSince: now,
    disableReason: null,
    endpointWasFailing: false,
    now,
  };
}
