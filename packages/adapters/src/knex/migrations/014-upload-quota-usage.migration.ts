import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * Bytes each client directory stored per calendar day (in APP_TIMEZONE), for
 * UPLOAD_QUOTA_MB_PER_DAY. One row per directory and day, reserved by a
 * conditional UPDATE before a file is stored (so processes never overshoot
 * together) and given back when the file is not stored.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('upload_quota_usage', (t) => {
    if (isMysql(knex)) {
      t.engine('InnoDB');
      t.charset('utf8mb4');
      t.collate('utf8mb4_unicode_ci');
    }
    // Directories compare exactly (case-sensitive).
    t.string('directory', 128).collate('utf8mb4_bin').notNullable();
    /** YYYY-MM-DD in APP_TIMEZONE. */
    t.string('day', 10).notNullable();
    t.bigInteger('bytes').notNullable().defaultTo(0);
    t.primary(['directory', 'day'], 'upload_quota_usage_primary');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('upload_quota_usage');
}
