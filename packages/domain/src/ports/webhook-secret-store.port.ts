/** The stored (sealed or plain) secrets of one webhook endpoint. */
export interface StoredWebhookSecrets {
  endpointId: number;
  secret: string;
  previousSecret: string | null;
}

/** Every endpoint's stored secrets, for re-encryption and the key check at start (operators' work, across directories). */
export interface WebhookSecretStorePort {
  /** The key ids that stored secrets name (current and previous ones); plain secrets name none. */
  keyIdsInUse(): Promise<string[]>;
  /** One stored value (a current or previous secret) sealed with the key `keyId`; null when none is. */
  sealedWith(keyId: string): Promise<string | null>;
  /** Up to `limit` endpoints with an id above `afterId`, in id order; with `only: 'plain'`, those holding a plain secret. */
  page(afterId: number, limit: number, only?: 'plain'): Promise<StoredWebhookSecrets[]>;
  /** Writes `next` if the endpoint still holds `expected` (a rotation meanwhile wins); whether it was written. */
  replace(expected: StoredWebhookSecrets, next: StoredWebhookSecrets): Promise<boolean>;
}
