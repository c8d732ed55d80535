import type { ClaimedDelivery, DeliveryOutcome } from '../../ports/webhook-delivery-queue.port.js';
import type { WebhookSenderPort } from '../../ports/webhook-sender.port.js';
import type { WebhookSignerPort } from '../../ports/webhook-signer.port.js';
import { disabledReason, isSuccess, nextAttemptAfterFailure, shouldDisable } from '../delivery-rules.js';
import { signingSecrets } from '../webhook-endpoint.js';

export interface WebhookDeliverySettings {
  timeoutMs: number;
  retryScheduleSeconds: readonly number[];
  disableAfterHours: number;
  allowPrivateTargets: boolean;
}

/**
 * One attempt: sign the event (with both secrets during a rotation), POST
 * it, and say what came of it: success, or a failure with the next attempt's
 * time, or the last failure; an endpoint that has only failed for long
 * enough is to be disabled. The caller records outcomes (in batches: one
 * commit for many attempts).
 */
export class DeliverWebhookUseCase {
  constructor(
    private readonly deps: {
      sender: WebhookSenderPort;
      signer: WebhookSignerPort;
      settings: WebhookDeliverySettings;
      nowSeconds: () => number;
    },
  ) {}

  async execute(claimed: ClaimedDelivery): Promise<DeliveryOutcome> {
    const { settings } = this.deps;
    const body = JSON.stringify(claimed.event);
    const sent = claimed.event
      ? await this.deps.sender.send({
          url: claimed.url,
          headers: this.headers(claimed, body),
          body,
          timeoutMs: settings.timeoutMs,
          allowPrivateTargets: settings.allowPrivateTargets,
        })
      : ({ kind: 'failed', error: 'The event is no longer kept (retention).', refused: false } as const);
    const now = this.deps.nowSeconds();
    const base = { deliveryId: claimed.delivery.id, endpointId: claimed.delivery.endpointId, now, endpointWasFailing: claimed.failingSince !== null };
    const outcome: DeliveryOutcome =
      sent.kind === 'answered' && isSuccess(sent.status)
        ? { ...base, succeeded: true, responseStatus: sent.status, error: null, retryAt: null, failingSince: null, disableReason: null }
        : this.failure(
            claimed,
            base,
            sent.kind === 'answered' ? sent.status : null,
            sent.kind === 'answered' ? `The endpoint answered ${sent.status}.` : sent.error,
            claimed.event !== null,
          );
    return outcome;
  }

  private failure(
    claimed: ClaimedDelivery,
    base: { deliveryId: number; endpointId: number; now: number; endpointWasFailing: boolean },
    responseStatus: number | null,
    error: string,
    retryable: boolean,
  ): DeliveryOutcome {
    const { settings } = this.deps;
    const failingSince = claimed.failingSince ?? base.now;
    const disable = shouldDisable(failingSince, base.now, settings.disableAfterHours);
    return {
      ...base,
      succeeded: false,
      responseStatus,
      error,
      retryAt: retryable && !disable ? nextAttemptAfterFailure(claimed.delivery.attempt, base.now, settings.retryScheduleSeconds) : null,
      failingSince,
      disableReason: disable ? disabledReason(settings.disableAfterHours) : null,
    };
  }

  private headers(claimed: ClaimedDelivery, body: string): Record<string, string> {
    const timestamp = this.deps.nowSeconds();
    const id = String(claimed.delivery.eventId);
    return {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': this.deps.signer.sign(id, timestamp, body, signingSecrets(claimed.secrets, timestamp)),
    };
  }
}
