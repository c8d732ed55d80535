import { randomBytes } from 'node:crypto';
import { ConfigError, requireSecretKeys, type AppConfig } from '@logi/config';
import { missingSecretKeys, ReencryptWebhookSecretsUseCase, type WebhookSecretStorePort } from '@logi/domain';
import { AesGcmSecretCipher, type SecretKey } from './aes-gcm-secret.cipher.js';
import { LOCAL_SECRET_KEY_FILE, localSecretKey } from './local-secret-key.file.js';

/**
 * The cipher of stored secrets for this process: SECRETS_ENCRYPTION_KEYS (the first seals, all open). The embedded
 * profile (no DATABASE_URL) also opens with its own key in DATA_DIR, and seals with it when no key is configured,
 * making it on first use. The production profile refuses to go on without a configured key (ConfigError), so a
 * current release never stores a webhook secret in clear.
 */
export function createSecretCipher(config: Pick<AppConfig, 'secretKeys' | 'databaseUrl' | 'dataDir'>): AesGcmSecretCipher {
  requireSecretKeys(config);
  const keys: SecretKey[] = [...config.secretKeys];
  if (config.databaseUrl === null) {
    const local = localSecretKey(config.dataDir, { create: keys.length === 0 });
    if (local && !keys.some((key) => key.id === local.id)) keys.push(local);
  }
  return new AesGcmSecretCipher(keys);
}

/** What the start check found: whether the database could be read, and how many plain secrets it sealed. */
export interface StoredSecretsCheck {
  checked: boolean;
  sealedPlain: number;
}

/**
 * At start, before a process serves or delivers: every key id that stored webhook secrets name is configured, and
 * every configured key opens one stored value sealed with its id (a key with the right id and other bytes would
 * otherwise fail every delivery quietly until the endpoint is disabled). Either failing throws a ConfigError, printed
 * as one line naming SECRETS_ENCRYPTION_KEYS and the key id, never the key. Then secrets still plain from a release
 * before encryption are sealed with the current key (each endpoint written only if unchanged meanwhile, so processes
 * starting together agree). A database that cannot be read or written now is not this check's to judge (readiness
 * reports it): `checked` is then false.
 */
export async function checkStoredSecrets(
  store: WebhookSecretStorePort,
  cipher: AesGcmSecretCipher,
  config: Pick<AppConfig, 'databaseUrl'>,
): Promise<StoredSecretsCheck> {
  const unread: StoredSecretsCheck = { checked: false, sealedPlain: 0 };
  let inUse: string[];
  try {
    inUse = await store.keyIdsInUse();
  } catch {
    return unread;
  }
  const missing = missingSecretKeys(inUse, cipher);
  const local = config.databaseUrl === null ? `DATA_DIR/${LOCAL_SECRET_KEY_FILE}` : null;
  if (missing.length > 0) {
    throw new ConfigError(
      'SECRETS_ENCRYPTION_KEYS',
      `lacks the key${missing.length === 1 ? '' : 's'} ${missing.map((id) => `"${id}"`).join(', ')} that webhook secrets in the database are encrypted with${local ? `, nor is it the key in ${local}` : ''} ` +
        `(${cipher.keyIds.length === 0 ? 'no key is configured' : `configured: ${cipher.keyIds.map((id) => `"${id}"`).join(', ')}`}): add it back as <id>:<base64 of 32 bytes>`,
    );
  }
  for (const id of inUse) {
    let sample: string | null;
    try {
      sample = await store.sealedWith(id);
    } catch {
      return unread;
    }
    if (sample === null) continue;
    try {
      cipher.open(sample);
    } catch {
      throw new ConfigError(
        'SECRETS_ENCRYPTION_KEYS',
        `has a key "${id}" that does not open the webhook secrets sealed under that id${local ? ` (or the key in ${local} is not the one they were sealed with)` : ''}: ` +
          `the id matches and the key does not; give "${id}" the key they were sealed with`,
      );
    }
  }
  try {
    const sealed = await new ReencryptWebhookSecretsUseCase({ store, cipher }).execute({ only: 'plain' });
    return { checked: true, sealedPlain: sealed.wasPlain };
  } catch {
    return unread;
  }
}

/**
 * A new SECRETS_ENCRYPTION_KEYS entry, `<id>:<base64 of 32 random bytes>`: the id is `k`, the UTC date and four random
 * hex digits (`k20261128-3fa9`), so keys made on one day still differ and a rotation's new key sorts after the old.
 */
export function newSecretKeyEntry(now: Date = new Date()): string {
  const date = now.toISOString().slice(0, 10).replaceAll('-', '');
  return `k${date}-${randomBytes(2).toString('hex')}:${randomBytes(32).toString('base64')}`;
}
