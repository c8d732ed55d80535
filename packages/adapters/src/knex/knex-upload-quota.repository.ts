import type { Knex } from 'knex';
import type { UploadQuotaPort } from '@logi/domain';

/**
 * UPLOAD_QUOTA_MB_PER_DAY's usage rows. A reservation is one conditional
 * UPDATE (`bytes + n <= limit`): the row lock makes concurrent reservations
 * of one directory, in any process, queue behind each other, so they never
 * pass the limit together. Same SQL on SQLite and MariaDB.
 */
export class KnexUploadQuotaRepository implements UploadQuotaPort {
  constructor(private readonly knex: Knex) {}

  async reserve(directory: string, day: string, bytes: number, limit: number): Promise<boolean> {
    // The day's row first (an ignored insert when it exists), so the UPDATE always has a row to lock.
    await this.knex('upload_quota_usage').insert({ directory, day, bytes: 0 }).onConflict(['directory', 'day']).ignore();
    const updated = await this.knex('upload_quota_usage')
      .where({ directory, day })
      .andWhereRaw('bytes + ? <= ?', [bytes, limit])
      .update({ bytes: this.knex.raw('bytes + ?', [bytes]) });
    return updated === 1;
  }

  async release(directory: string, day: string, bytes: number): Promise<void> {
    await this.knex('upload_quota_usage')
      .where({ directory, day })
      .update({ bytes: this.knex.raw('CASE WHEN bytes > ? THEN bytes - ? ELSE 0 END', [bytes, bytes]) });
  }

  async removeBefore(day: string): Promise<number> {
    return this.knex('upload_quota_usage').where('day', '<', day).delete();
  }

  async used(directory: string, day: string): Promise<number> {
    const row = (await this.knex('upload_quota_usage').select('bytes').where({ directory, day }).first()) as { bytes: number | string } | undefined;
    return row ? Number(row.bytes) : 0;
  }
}
