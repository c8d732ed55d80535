import { describe, expect, it } from 'vitest';
import {
  DeliverWebhookUseCase,
  ReencryptWebhookSecretsUseCase,
  missingSecretKeys,
  type SecretCipherPort,
  type StoredWebhookSecrets,
  type WebhookSecretStorePort,
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
    // Stored as they are at rest: sealed (the current one) and plain from before encryption (the previous one).
    secrets: { current: 'sealed:k1:whsec_new', previous: 'whsec_old', previousUntil: 2_000 },
    privateTargetsAllowed: false,
    failingSince: null,
    event: { id: 42, type: 'invoice.updated', created: 900, data: { object: { id: 7 }, previous_attributes: { status: 'issued' } } },
    ...overrides,
  };
}

/** A cipher that marks what it seals with its key id, and opens only its own keys' values (plain ones pass through). */
export function fakeCipher(keyIds: string[] = ['k1']): SecretCipherPort {
  const parse = (stored: string) => /^sealed:([^:]+):(.*)$/.exec(stored);
  return {
    keyIds,
    seal: (plain) => (keyIds[0] === undefined ? plain : `sealed:${keyIds[0]}:${plain}`),
    open: (stored) => {
      const sealed = parse(stored);
      if (!sealed) return stored;
      if (!keyIds.includes(sealed[1]!)) throw new Error(`key ${sealed[1]!} is not configured`);
      return sealed[2]!;
    },
    keyIdOf: (stored) => parse(stored)?.[1] ?? null,
    isStale: (stored) => keyIds[0] !== undefined && parse(stored)?.[1] !== keyIds[0],
  };
}

/** The use case with fakes: a sender that answers as told and records what it got, a queue that records outcomes, a signer that shows its inputs. */
function deliverWith(answer: WebhookAttemptResult, now = 1_000, cipher = fakeCipher()) {
  const sent: WebhookRequest[] = [];
  const recorded: DeliveryOutcome[] = [];
  const deliver = new DeliverWebhookUseCase({
    sender: { send: async (request) => (sent.push(request), answer) },
    signer: { sign: (id, timestamp, body, secrets) => `${id}|${timestamp}|${body.length}|${secrets.join('+')}`, newSecret: () => 'whsec_x' },
    cipher,
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
        errorDetail: null,
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
      error: 'answered 500',
      errorDetail: 'The endpoint answered 500.',
      retryAt: 1005,
      failingSince: 1000,
      disableReason: null,
    });
  });

  it('when the last attempt of the schedule fails, then no retry; when the streak reached the disable period, the endpoint is disabled and nothing is retried', async () => {
    const last = deliverWith({ kind: 'failed', error: 'timed out after 10000 ms', reason: 'timed out', refused: false });
    await last.deliver.execute(claimed({ delivery: { ...claimed().delivery, attempt: 3 } }));
    expect(last.recorded[0]).toMatchObject({
      retryAt: null,
      error: 'timed out',
      errorDetail: 'timed out after 10000 ms',
      responseStatus: null,
      disableReason: null,
    });
    const long = deliverWith({ kind: 'failed', error: 'connection refused', reason: 'connection failed', refused: false }, 10_000);
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

describe('DeliverWebhookUseCase: secrets at rest, private targets, what the client is told', () => {
  it('when a delivery fails to connect, then the client is told a coarse reason and the operator keeps the detail with the address', async () => {
    const detail = 'refused: address 10.1.2.3 is not public';
    const { deliver, recorded } = deliverWith({ kind: 'failed', error: detail, reason: 'refused: private address', refused: true });
    await deliver.execute(claimed());
    expect(recorded[0]).toMatchObject({ succeeded: false, error: 'refused: private address', errorDetail: detail });
    expect(recorded[0]!.error).not.toMatch(/\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/);
  });

  it("when the endpoint's directory is allowed private targets, then the sender is told so; else only the global switch counts", async () => {
    const allowed = deliverWith({ kind: 'answered', status: 200 });
    await allowed.deliver.execute(claimed({ privateTargetsAllowed: true }));
    const other = deliverWith({ kind: 'answered', status: 200 });
    await other.deliver.execute(claimed());
    expect([allowed.sent[0]!.allowPrivateTargets, other.sent[0]!.allowPrivateTargets]).toEqual([true, false]);
  });

  it('when a stored secret is sealed with a key this process lacks, then nothing is sent and the attempt fails with a retry, never signing with the sealed text', async () => {
    const { deliver, sent, recorded } = deliverWith({ kind: 'answered', status: 200 }, 1_000, fakeCipher(['k2']));
    await deliver.execute(claimed());
    expect(sent).toEqual([]);
    expect(recorded[0]).toMatchObject({ succeeded: false, error: 'not sent', retryAt: 1005 });
    expect(recorded[0]!.errorDetail).toContain('k1');
  });

  it('when attempts carry the same stored secrets, then each stored form is opened once; a rotated secret (a new stored form) is opened again', async () => {
    const cipher = fakeCipher();
    const opened: string[] = [];
    const counting: SecretCipherPort = { ...cipher, open: (stored) => (opened.push(stored), cipher.open(stored)) };
    const { deliver, sent } = deliverWith({ kind: 'answered', status: 200 }, 1_000, counting);
    await deliver.execute(claimed());
    await deliver.execute(claimed({ delivery: { id: 12, endpointId: 2, eventId: 43, eventType: 'invoice.updated', attempt: 1 } }));
    const rotated = { current: 'sealed:k1:whsec_newer', previous: 'sealed:k1:whsec_new', previousUntil: 2_000 };
    await deliver.execute(claimed({ secrets: rotated }));
    expect(opened).toEqual(['sealed:k1:whsec_new', 'whsec_old', 'sealed:k1:whsec_newer']);
    expect(sent.map((request) => request.headers['webhook-signature']!.split('|')[3])).toEqual([
      'whsec_new+whsec_old',
      'whsec_new+whsec_old',
      'whsec_newer+whsec_new',
    ]);
  });
});

/** Endpoints' stored secrets in memory; `replace` writes only over what was read. */
class FakeSecretStore implements WebhookSecretStorePort {
  constructor(readonly rows: StoredWebhookSecrets[]) {}
  async keyIdsInUse(): Promise<string[]> {
    const ids = this.rows.flatMap((row) => [row.secret, row.previousSecret]).map((value) => (value ? /^sealed:([^:]+):/.exec(value)?.[1] : undefined));
    return [...new Set(ids.filter((id): id is string => id !== undefined))].sort();
  }
  async sealedWith(keyId: string): Promise<string | null> {
    const values = this.rows.flatMap((row) => [row.secret, row.previousSecret]);
    return values.find((value) => value?.startsWith(`sealed:${keyId}:`)) ?? null;
  }
  async page(afterId: number, limit: number, only?: 'plain'): Promise<StoredWebhookSecrets[]> {
    const plain = (row: StoredWebhookSecrets) => [row.secret, row.previousSecret].some((value) => value !== null && !value.startsWith('sealed:'));
    return this.rows.filter((row) => row.endpointId > afterId && (only !== 'plain' || plain(row))).slice(0, limit);
  }
  async replace(expected: StoredWebhookSecrets, next: StoredWebhookSecrets): Promise<boolean> {
    const index = this.rows.findIndex((row) => row.endpointId === expected.endpointId);
    const row = this.rows[index]!;
    if (row.secret !== expected.secret || row.previousSecret !== expected.previousSecret) return false;
    this.rows[index] = next;
    return true;
  }
}

describe('ReencryptWebhookSecretsUseCase', () => {
  it('when secrets are plain or under an older key, then each is sealed with the current key (previous ones too); running it again changes nothing', async () => {
    const store = new FakeSecretStore([
      { endpointId: 1, secret: 'whsec_a', previousSecret: null },
      { endpointId: 2, secret: 'sealed:old:whsec_b', previousSecret: 'whsec_b0' },
      { endpointId: 3, secret: 'sealed:new:whsec_c', previousSecret: null },
    ]);
    const cipher = fakeCipher(['new', 'old']);
    const first = await new ReencryptWebhookSecretsUseCase({ store, cipher }).execute();
    expect(first).toEqual({ endpoints: 3, reencrypted: 3, wasPlain: 2, skipped: 0 });
    expect(store.rows).toEqual([
      { endpointId: 1, secret: 'sealed:new:whsec_a', previousSecret: null },
      { endpointId: 2, secret: 'sealed:new:whsec_b', previousSecret: 'sealed:new:whsec_b0' },
      { endpointId: 3, secret: 'sealed:new:whsec_c', previousSecret: null },
    ]);
    expect(await new ReencryptWebhookSecretsUseCase({ store, cipher }).execute()).toEqual({ endpoints: 3, reencrypted: 0, wasPlain: 0, skipped: 0 });
    expect(await store.keyIdsInUse()).toEqual(['new']);
  });

  it('when only plain secrets are asked for (the start of every process), then plain ones are sealed and ones under an older key are left as they are', async () => {
    const store = new FakeSecretStore([
      { endpointId: 1, secret: 'sealed:old:whsec_a', previousSecret: 'whsec_a0' },
      { endpointId: 2, secret: 'sealed:old:whsec_b', previousSecret: null },
      { endpointId: 3, secret: 'whsec_c', previousSecret: null },
    ]);
    const cipher = fakeCipher(['new', 'old']);
    expect(await new ReencryptWebhookSecretsUseCase({ store, cipher }).execute({ only: 'plain' })).toEqual({
      endpoints: 2,
      reencrypted: 2,
      wasPlain: 2,
      skipped: 0,
    });
    expect(store.rows).toEqual([
      { endpointId: 1, secret: 'sealed:old:whsec_a', previousSecret: 'sealed:new:whsec_a0' },
      { endpointId: 2, secret: 'sealed:old:whsec_b', previousSecret: null },
      { endpointId: 3, secret: 'sealed:new:whsec_c', previousSecret: null },
    ]);
    expect(await new ReencryptWebhookSecretsUseCase({ store, cipher }).execute({ only: 'plain' })).toEqual({
      endpoints: 0,
      reencrypted: 0,
      wasPlain: 0,
      skipped: 0,
    });
  });

  it('when keys are configured that stored secrets do not name, then the missing ones are listed', () => {
    expect(missingSecretKeys(['k1', 'k2'], fakeCipher(['k2']))).toEqual(['k1']);
    expect(missingSecretKeys([], fakeCipher([]))).toEqual([]);
  });
});
