import type { SecretCipherPort } from '../../ports/secret-cipher.port.js';
import type { StoredWebhookSecrets, WebhookSecretStorePort } from '../../ports/webhook-secret-store.port.js';

/** Endpoints read per page. */
const PAGE = 200;

export interface ReencryptResult {
  /** Endpoints looked at. */
  endpoints: number;
  /** Secrets (current and previous) written sealed with the current key. */
  reencrypted: number;
  /** Of those, secrets that were plain text. */
  wasPlain: number;
  /** Endpoints whose secret changed meanwhile (a rotation): already sealed by it with the current key. */
  skipped: number;
}

/**
 * Seals every stored webhook secret with the current key: plain ones from before encryption and ones sealed with an
 * older key (with `only: 'plain'`, the plain ones alone, as every process does at start). Running it again changes
 * nothing. Each endpoint is written only if it still holds what was read, so a rotation at the same time is never
 * undone.
 */
export class ReencryptWebhookSecretsUseCase {
  constructor(private readonly deps: { store: WebhookSecretStorePort; cipher: SecretCipherPort }) {}

  async execute(options: { only?: 'plain' } = {}): Promise<ReencryptResult> {
    const { store, cipher } = this.deps;
    const result: ReencryptResult = { endpoints: 0, reencrypted: 0, wasPlain: 0, skipped: 0 };
    const due = (value: string | null): value is string =>
      value !== null && cipher.isStale(value) && (options.only !== 'plain' || cipher.keyIdOf(value) === null);
    for (let afterId = 0; ;) {
      const page = await store.page(afterId, PAGE, options.only);
      if (page.length === 0) return result;
      for (const stored of page) {
        result.endpoints += 1;
        const stale = [stored.secret, stored.previousSecret].filter(due);
        if (stale.length === 0) continue;
        const reseal = (value: string) => (due(value) ? cipher.seal(cipher.open(value)) : value);
        const next: StoredWebhookSecrets = {
          endpointId: stored.endpointId,
          secret: reseal(stored.secret),
          previousSecret: stored.previousSecret === null ? null : reseal(stored.previousSecret),
        };
        if (await store.replace(stored, next)) {
          result.reencrypted += stale.length;
          result.wasPlain += stale.filter((value) => cipher.keyIdOf(value) === null).length;
        } else {
          result.skipped += 1;
        }
      }
      afterId = page.at(-1)!.endpointId;
    }
  }
}

/** The key ids stored secrets name that the cipher cannot open with (a process missing them must not start). */
export function missingSecretKeys(inUse: readonly string[], cipher: Pick<SecretCipherPort, 'keyIds'>): string[] {
  return inUse.filter((id) => !cipher.keyIds.includes(id));
}
