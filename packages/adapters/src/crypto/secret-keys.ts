import { ConfigError, type AppConfig } from '@logi/config';
import { missingSecretKeys, type WebhookSecretStorePort } from '@logi/domain';
import { AesGcmSecretCipher, type SecretKey } from './aes-gcm-secret.cipher.js';
import { LOCAL_SECRET_KEY_FILE, localSecretKey } from './local-secret-key.file.js';

/**
 * The cipher of stored secrets for this process: SECRETS_ENCRYPTION_KEYS (the first seals, all open). The embedded
 * profile (no DATABASE_URL) also opens with its own key in DATA_DIR, and seals with it when no key is configured,
 * making it on first use. A shared database without a configured key stores new secrets plain, as before encryption.
 */
export function createSecretCipher(config: Pick<AppConfig, 'secretKeys' | 'databaseUrl' | 'dataDir'>): AesGcmSecretCipher {
  const keys: SecretKey[] = [...config.secretKeys];
  if (config.databaseUrl === null) {
    const local = localSecretKey(config.dataDir, { create: keys.length === 0 });
    if (local && !keys.some((key) => key.id === local.id)) keys.push(local);
  }
  return new AesGcmSecretCipher(keys);
}

/**
 * A process must not start when a stored secret is sealed with a key it lacks: its deliveries could not be signed.
 * Thrown as a ConfigError, so it is printed as one line naming the variable. A database that cannot be read now is
 * not this check's to judge (readiness reports it): true when checked, false when it could not be.
 */
export async function assertSecretKeysKnown(
  store: WebhookSecretStorePort,
  cipher: AesGcmSecretCipher,
  config: Pick<AppConfig, 'databaseUrl'>,
): Promise<boolean> {
  let inUse: string[];
  try {
    inUse = await store.keyIdsInUse();
  } catch {
    return false;
  }
  const missing = missingSecretKeys(inUse, cipher);
  if (missing.length === 0) return true;
  const where = config.databaseUrl === null ? `, nor is it the key in DATA_DIR/${LOCAL_SECRET_KEY_FILE}` : '';
  throw new ConfigError(
    'SECRETS_ENCRYPTION_KEYS',
    `lacks the key${missing.length === 1 ? '' : 's'} ${missing.map((id) => `"${id}"`).join(', ')} that webhook secrets in the database are encrypted with${where} ` +
      `(${cipher.keyIds.length === 0 ? 'no key is configured' : `configured: ${cipher.keyIds.map((id) => `"${id}"`).join(', ')}`}): add it back as <id>:<base64 of 32 bytes>`,
  );
}
