import type { ClaimedDelivery, DeliveryOutcome } from '../../ports/webhook-delivery-queue.port.js';
import type { SecretCipherPort } from '../../ports/secret-cipher.port.js';
import type { WebhookAttemptResult, WebhookSenderPort } from '../../ports/webhook-sender.port.js';
import type { WebhookSignerPort } from '../../ports/webhook-signer.port.js';
import { disabledReason, isSuccess, nextAttemptAfterFailure, shouldDisable } from '../delivery-rules.js';
import { signingSecrets, type WebhookSecrets } from '../webhook-endpoint.js';

export interface WebhookDeliverySettings {
  timeoutMs: number;
  retryScheduleSeconds: readonly number[];
  disableAfterHours: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: every directory may; else only the directories the operator allowed (the claim says). */
  allowPrivateTargets: boolean;
}

const RETENTION_ERROR = 'The event is no longer kept (retention).';
/** Opened secrets kept, by their stored (sealed) form; past this many the memo starts again. */
const OPENED_SECRETS_KEPT = 1_000;

/**
 * One attempt: sign the event (with both secrets during a rotation), POST
 * it, and say what came of it: success, or a failure with the next attempt's
 * time, or the last failure; an endpoint that has only failed for long
 * enough is to be disabled. The caller records outcomes (in batches: one
 * commit for many attempts).
 */
export class DeliverWebhookUseCase {
  private readonly bodies = new WeakMap<object, string>();
  /**
   * Secrets opened before, by stored form: a sealed value names its key and carries a random IV, so one stored form
   * always opens to the same secret, and a rotation stores a new one. Opening one per attempt was 6 % of a delivering
   * process's time (docs/benchmarks.md, "Webhook delivery").
   */
  private readonly opened = new Map<string, string>();

  constructor(
    private readonly deps: {
      sender: WebhookSenderPort;
      signer: WebhookSignerPort;
      /** Opens the stored secrets (sealed at rest, or plain ones from before). */
      cipher: SecretCipherPort;
      settings: WebhookDeliverySettings;
      nowSeconds: () => number;
    },
  ) {}

  async execute(claimed: ClaimedDelivery): Promise<DeliveryOutcome> {
    const sent = await this.send(claimed);
    const now = this.deps.nowSeconds();
    const base = { deliveryId: claimed.delivery.id, endpointId: claimed.delivery.endpointId, now, endpointWasFailing: claimed.failingSince !== null };
    if (sent.kind === 'answered' && isSuccess(sent.status))
      return { ...base, succeeded: true, responseStatus: sent.status, error: null, errorDetail: null, retryAt: null, failingSince: null, disableReason: null };
    // The client sees a coarse reason; the operator's detail (addresses, ports, system codes) is kept beside it.
    const error =
      sent.kind === 'answered'
        ? { client: `answered ${sent.status}`, detail: `The endpoint answered ${sent.status}.` }
        : { client: claimed.event ? sent.reason : RETENTION_ERROR, detail: sent.error };
    return this.failure(claimed, base, sent.kind === 'answered' ? sent.status : null, error, claimed.event !== null);
  }

  private async send(claimed: ClaimedDelivery): Promise<WebhookAttemptResult> {
    const { settings } = this.deps;
    if (!claimed.event) return { kind: 'failed', error: RETENTION_ERROR, reason: 'not sent', refused: false };
    const body = this.bodyOf(claimed.event);
    let secrets: WebhookSecrets;
    try {
      secrets = this.openSecrets(claimed.secrets);
    } catch (error) {
      // A key removed too early (or a value altered): retried on the schedule, so restoring the key lets it through.
      return {
        kind: 'failed',
        error: `The signing secret cannot be decrypted: ${error instanceof Error ? error.message : String(error)}`,
        reason: 'not sent',
        refused: false,
      };
    }
    return this.deps.sender.send({
      url: claimed.url,
      headers: this.headers(claimed, secrets, body),
      body,
      timeoutMs: settings.timeoutMs,
      allowPrivateTargets: settings.allowPrivateTargets || claimed.privateTargetsAllowed,
    });
  }

  /** A claim hands the attempts of one event to all its endpoints the same event object: its body is made once. */
  private bodyOf(event: NonNullable<ClaimedDelivery['event']>): string {
    let body = this.bodies.get(event);
    if (body === undefined) {
      body = JSON.stringify(event);
      this.bodies.set(event, body);
    }
    return body;
  }

  private openSecrets(stored: WebhookSecrets): WebhookSecrets {
    return { ...stored, current: this.open(stored.current), previous: stored.previous === null ? null : this.open(stored.previous) };
  }

  private open(stored: string): string {
    let secret = this.opened.get(stored);
    if (secret === undefined) {
      secret = this.deps.cipher.open(stored);
      if (this.opened.size >= OPENED_SECRETS_KEPT) this.opened.clear();
      this.opened.set(stored, secret);
    }
    return secret;
  }

  private failure(
    claimed: ClaimedDelivery,
    base: { deliveryId: number; endpointId: number; now: number; endpointWasFailing: boolean },
    responseStatus: number | null,
    error: { client: string; detail: string },
    retryable: boolean,
  ): DeliveryOutcome {
    const { settings } = this.deps;
    const failingSince = claimed.failingSince ?? base.now;
    const disable = shouldDisable(failingSince, base.now, settings.disableAfterHours);
    return {
      ...base,
      succeeded: false,
      responseStatus,
      error: error.client,
      errorDetail: error.detail,
      retryAt: retryable && !disable ? nextAttemptAfterFailure(claimed.delivery.attempt, base.now, settings.retryScheduleSeconds) : null,
      failingSince,
      disableReason: disable ? disabledReason(settings.disableAfterHours) : null,
    };
  }

  private headers(claimed: ClaimedDelivery, secrets: WebhookSecrets, body: string): Record<string, string> {
    const timestamp = this.deps.nowSeconds();
    const id = String(claimed.delivery.eventId);
    return {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': this.deps.signer.sign(id, timestamp, body, signingSecrets(secrets, timestamp)),
    };
  }
}
