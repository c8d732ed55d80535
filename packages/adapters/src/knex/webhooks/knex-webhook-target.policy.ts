import type { Knex } from 'knex';
import type { WebhookTargetPolicyPort } from '@logi/domain';

/** The directories an operator allowed private webhook targets (`webhook_private_targets`, one row each). */
export class KnexWebhookTargetPolicy implements WebhookTargetPolicyPort {
  constructor(private readonly knex: Knex) {}

  async allowsPrivateTargets(directory: string): Promise<boolean> {
    return (await this.knex('webhook_private_targets').select('directory').where({ directory }).first()) !== undefined;
  }

  /** Allows one directory; false when it already was. */
  async allow(directory: string, now: number): Promise<boolean> {
    if (await this.allowsPrivateTargets(directory)) return false;
    await this.knex('webhook_private_targets').insert({ directory, allowed_at: now }).onConflict('directory').ignore();
    return true;
  }

  /** Withdraws it; false when it was not allowed. */
  async deny(directory: string): Promise<boolean> {
    return (await this.knex('webhook_private_targets').where({ directory }).delete()) > 0;
  }

  /** Every allowed directory with when it was allowed (Unix seconds). */
  async list(): Promise<Array<{ directory: string; allowedAt: number }>> {
    const rows = (await this.knex('webhook_private_targets').select('directory', 'allowed_at').orderBy('directory')) as Array<Record<string, unknown>>;
    return rows.map((row) => ({ directory: String(row.directory), allowedAt: Number(row.allowed_at) }));
  }
}
