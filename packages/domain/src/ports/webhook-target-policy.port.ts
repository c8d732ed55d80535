/** Which client directories the operator lets aim webhooks at private targets (`pnpm cli webhooks:allow-private`). */
export interface WebhookTargetPolicyPort {
  /** Whether this directory may use http and loopback, private or link-local targets. */
  allowsPrivateTargets(directory: string): Promise<boolean>;
}
