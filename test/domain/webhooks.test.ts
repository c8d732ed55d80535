import { describe, expect, it } from 'vitest';
import {
  DeliverWebhookUseCase,
  nextAttemptAfterFailure,
  shouldDisable,
  signingSecrets,
  type ClaimedDelivery,
  type DeliveryOutcome,
  type WebhookAttemptResult,
  type WebhookRequest,
} from '@logi/domain';

describe('delivery rules', () => {
  it('when attempt N fails, then the next is due after the Nth delay, and none after the last', () => {
    const schedule = [5, 300, 1800];
    expect([1, 2, 3, 4].map((attempt) => nextAttemptAfterFailure(attempt, 1000, schedule))).toEqual([1005, 1300, 2800, null]);
  });

  it('when an endpoint has failed for the whole disable period, then it is disabled; a shorter streak or none is not', () => {
    expect(shouldDisable(0, 120 * 3600, 120)).toBe(true);
    expect(shouldDisable(1, 120 * 3600, 120)).toBe(false);
    expect(shouldDisable(null, 10 ** 9, 120)).toBe(false);
  });

  it('when a secret was rotated, then both sign until the overlap ends, then only the new one', () => {
    const secrets = { current: 'new', previous: 'old', previousUntil: 100 };
    expect(signingSecrets(secrets, 99)).toEqual(['new', 'old']);
    expect(signingSecrets(secrets, 100)).toEqual(['new']);
  });
});

function claimed(overrides: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    delivery: { id: 11, endpointId: 2, eventId: 42, eventType: 'invoice.updated', attempt: 1 },
    directory: 'north',
    url: 'https://hooks.example.com/x',
    secrets: { current: 'whsec_new', previous: 'whsec_old', previousUntil: 2_000 },
    failingSince: null,
    event: { id: 42, type: 'invoice.updated', created: 900, data: { object: { id: 7 }, previous_attributes: { status: 'issued' } } },
    ...overrides,
  };
}

/** The use case with fakes: a sender that answers as told and records what it got, a queue that records outcomes, a signer that shows its inputs. */
function deliverWith(answer: WebhookAttemptResult, now = 1_000) {
  const sent: WebhookRequest[] = [];
  const recorded: DeliveryOutcome[] = [];
  const deliver = new DeliverWebhookUseCase({
    sender: { send: async (request) => (sent.push(request), answer) },
    signer: { sign: (id, timestamp, body, secrets) => `${id}|${timestamp}|${body.length}|${secrets.join('+')}`, newSecret: () => 'whsec_x' },
    settings: { timeoutMs: 10_000, retryScheduleSeconds: [5, 300], disableAfterHours: 1, allowPrivateTargets: false },
    nowSeconds: () => now,
  });
  return {
    deliver: { execute: async (claim: ClaimedDelivery) => recorded.push(await deliver.execute(claim)) },
    sent,
    recorded,
  };
}

describe('DeliverWebhookUseCase', () => {
  it('when the endpoint answers 2xx, then the event JSON is POSTed with the Standard Webhooks headers (both secrets while they overlap) and success is recorded', async () => {
    const { deliver, sent, recorded } = deliverWith({ kind: 'answered', status: 204 });
    await deliver.execute(claimed());
    const body = JSON.stringify(claimed().event);
    expect(sent).toEqual([
      {
        url: 'https://hooks.example.com/x',
        body,
        timeoutMs: 10_000,
        allowPrivateTargets: false,
        headers: {
          'content-type': 'application/json',
          'webhook-id': '42',
          'webhook-timestamp': '1000',
          'webhook-signature': `42|1000|${body.length}|whsec_new+whsec_old`,
        },
      },
    ]);
    expect(recorded).toEqual([
      {
        deliveryId: 11,
        endpointId: 2,
        now: 1000,
        succeeded: true,
        responseStatus: 204,
        error: null,
        retryAt: null,
        failingSince: null,
        disableReason: null,
        endpointWasFailing: false,
      },
    ]);
  });

  it('when the endpoint answers 500, then a failure with its status, the retry due after the first delay, and the streak starting now', async () => {
    const { deliver, recorded } = deliverWith({ kind: 'answered', status: 500 });
    await deliver.execute(claimed());
    expect(recorded[0]).toMatchObject({
      succeeded: false,
      responseStatus: 500,
      error: 'The endpoint answered 500.',
      retryAt: 1005,
      failingSince: 1000,
      disableReason: null,
    });
  });

  it('when the last attempt of the schedule fails, then no retry; when the streak reached the disable period, the endpoint is disabled and nothing is retried', async () => {
    const last = deliverWith({ kind: 'failed', error: 'timed out after 10000 ms', refused: false });
    await last.deliver.execute(claimed({ delivery: { ...claimed().delivery, attempt: 3 } }));
    expect(last.recorded[0]).toMatchObject({ retryAt: null, error: 'timed out after 10000 ms', responseStatus: null, disableReason: null });
    const long = deliverWith({ kind: 'failed', error: 'connection refused', refused: false }, 10_000);
    await long.deliver.execute(claimed({ failingSince: 10_000 - 3600 }));
    expect(long.recorded[0]).toMatchObject({
      retryAt: null,
      failingSince: 10_000 - 3600,
      disableReason: 'Disabled after 1 hours in which every delivery failed.',
    });
  });

  it('when the event is no longer kept, then nothing is sent and the attempt fails for good', async () => {
    const { deliver, sent, recorded } = deliverWith({ kind: 'answered', status: 200 });
    await deliver.execute(claimed({ event: null }));
    expect(sent).toEqual([]);
    expect(recorded[0]).toMatchObject({ succeeded: false, error: 'The event is no longer kept (retention).', retryAt: null });
  });
});
