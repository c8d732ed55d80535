/**
 * Encrypts secrets kept at rest (webhook signing secrets). A stored value is
 * either encrypted (it names the key that sealed it) or plain text written
 * before encryption existed: both are read, only encrypted values are written
 * once a key is configured (docs/contribute/decisions/0043-webhook-secrets-at-rest.md).
 */
export interface SecretCipherPort {
  /** The stored form of `plain`: sealed with the current key, or `plain` itself when no key is configured. */
  seal(plain: string): string;
  /** The plain secret of a stored value (plain text passes through); throws when its key is not configured or it was altered. */
  open(stored: string): string;
  /** The key id a stored value names; null for plain text. */
  keyIdOf(stored: string): string | null;
  /** Whether `seal` would write `stored` differently now: plain text while a key is configured, or sealed with another key than the current one. */
  isStale(stored: string): boolean;
  /** The ids of the keys that can open values (the first seals); empty when none is configured. */
  readonly keyIds: readonly string[];
}
