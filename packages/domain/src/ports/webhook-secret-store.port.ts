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
  /** Up to `limit` endpoints with an id above `afterId`, in id order. */
  page(afterId: number, limit: number): Promise<StoredWebhookSecrets[]>;
  /** Writes `next` if the endpoint still holds `expected` (a rotation meanwhile wins); whether it was written. */
  replace(expected: StoredWebhookSecrets, next: StoredWebhookSecrets): Promise<boolean>;
}
