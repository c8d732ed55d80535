import type { CommandContext } from './cli-commands.js';
import { CommandError, UsageError } from './cli-io.js';

/**
 * After a backup was restored, before the API serves again: record where the restored feed ends and start new
 * event ids past any a client may have seen, and forget the `Idempotency-Key` answers Redis kept (they name rows the
 * restore lost) (docs/operate/backup-and-restore.md).
 */
export async function dbAfterRestore(ctx: CommandContext, options: { highestIssued?: string }): Promise<void> {
  const highestIssued = options.highestIssued === undefined ? undefined : Number(options.highestIssued);
  if (highestIssued !== undefined && (!/^\d+$/.test(options.highestIssued!) || !Number.isSafeInteger(highestIssued))) {
    throw new UsageError(`--highest-issued must be an event id, a whole number below 2^53 (got "${options.highestIssued}").`);
  }
  const knex = ctx.knex();
  const restores = ctx.db.feedRestores(knex);
  if (!(await restores.hasFeed())) {
    throw new CommandError('The database has no events table: it was never migrated, so no backup was restored into it. Nothing done.');
  }
  const answers = ctx.idempotencyAnswers();
  if (answers) {
    const forgotten = await answers.forgetAll().catch((error: unknown) => {
      throw new CommandError(
        `The Idempotency-Key answers in Redis could not be removed (${error instanceof Error ? error.message : String(error)}); nothing was marked. Run the command again once Redis answers.`,
      );
    });
    ctx.io.out(`Removed ${forgotten} Idempotency-Key answers kept in Redis: a retried POST runs anew.`);
  }
  // A backup from an older release gets the current schema first (feed_restores among it).
  const migrated = await ctx.db.migrate(knex);
  if (migrated.length > 0) ctx.io.out(`Schema updated: ${migrated.join(', ')}`);
  const done = await restores.record({ highestIssued, nowSeconds: Date.now() / 1000 });
  ctx.io.out(`Restored feed ends at event ${done.restoredEnd}; new events start at ${done.firstNewId}.`);
  ctx.io.out(`GET /v1/events answers 410 for a cursor from ${done.restoredEnd + 1} to ${done.firstNewId - 1}; cursors at or below ${done.restoredEnd} go on.`);
  if (done.earlier.length > 0) ctx.io.out(`Earlier restores: ${done.earlier.map((mark) => `${mark.restoredEnd} -> ${mark.firstNewId}`).join(', ')}.`);
}
