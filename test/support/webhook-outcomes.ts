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
