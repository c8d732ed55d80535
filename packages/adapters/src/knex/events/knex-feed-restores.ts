import type { Knex } from 'knex';
import { firstIdAfterRestore, type FeedRestore } from '@logi/domain';
import { isMysql } from '../sql-dialect.js';

export interface RecordedRestore extends FeedRestore {
  /** The restore marks before this one, oldest first. */
  earlier: FeedRestore[];
}

/**
 * What `pnpm cli db:after-restore` does to the database: record where the
 * restored feed ends and move the events' id sequence past every id that
 * may have been issued before the loss
 * (docs/contribute/decisions/0051-after-a-restore.md).
 */
export class KnexFeedRestores {
  private readonly mysql: boolean;

  constructor(private readonly knex: Knex) {
    this.mysql = isMysql(knex);
  }

  /** false on a database that was never migrated (nothing was restored into it). */
  hasFeed(): Promise<boolean> {
    return this.knex.schema.hasTable('events');
  }

  /**
   * Records one restore. Each run records one: a second run with no event
   * in between only widens the gap, where no client can hold a cursor.
   */
  async record(options: { highestIssued?: number; nowSeconds: number }): Promise<RecordedRestore> {
    return this.knex.transaction(async (trx) => {
      const earlier = ((await trx('feed_restores').select('restored_end', 'first_new_id').orderBy('id')) as Array<Record<string, unknown>>).map((row) => ({
        restoredEnd: Number(row.restored_end),
        firstNewId: Number(row.first_new_id),
      }));
      const restoredEnd = await this.restoredEnd(trx);
      const firstNewId = firstIdAfterRestore({ restoredEnd, highestIssued: options.highestIssued, nowSeconds: options.nowSeconds });
      await trx('feed_restores').insert({ restored_end: restoredEnd, first_new_id: firstNewId, created: Math.floor(options.nowSeconds) });
      await this.startIdsAt(trx, firstNewId);
      return { restoredEnd, firstNewId, earlier };
    });
  }

  /** The highest id the restored feed holds or held: its newest event, or what retention removed if newer. */
  private async restoredEnd(trx: Knex.Transaction): Promise<number> {
    const newest = (await trx('events').max({ id: 'id' }).first()) as { id: unknown } | undefined;
    const removed = (await trx('event_retention').max({ id: 'removed_through' }).first()) as { id: unknown } | undefined;
    return Math.max(Number(newest?.id ?? 0), Number(removed?.id ?? 0));
  }

  /**
   * MariaDB keeps the counter in InnoDB's redo log and pages since 10.2.4,
   * so it survives a restart (checked on 10.11); it never goes below the
   * table's highest id. SQLite's AUTOINCREMENT table (migration 008) takes
   * the next id above both its sqlite_sequence row and the highest id.
   */
  private async startIdsAt(trx: Knex.Transaction, firstNewId: number): Promise<void> {
    if (!Number.isSafeInteger(firstNewId) || firstNewId < 1) throw new RangeError(`Not an id: ${firstNewId}`);
    if (this.mysql) {
      // DDL takes no placeholders; the value is a checked integer.
      await trx.raw(`ALTER TABLE events AUTO_INCREMENT = ${firstNewId}`);
      return;
    }
    const updated = await trx('sqlite_sequence')
      .where({ name: 'events' })
      .update({ seq: trx.raw('MAX(seq, ?)', [firstNewId - 1]) });
    if (updated === 0) await trx('sqlite_sequence').insert({ name: 'events', seq: firstNewId - 1 });
  }
}
