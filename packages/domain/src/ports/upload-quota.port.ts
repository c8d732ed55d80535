/**
 * Bytes each client directory stored per day, shared by every process, so
 * that UPLOAD_QUOTA_MB_PER_DAY holds however many processes take uploads.
 */
export interface UploadQuotaPort {
  /**
   * Adds `bytes` to the directory's usage of `day` (YYYY-MM-DD) when the
   * result stays within `limit`, atomically: two processes reserving at once
   * never together pass it. False (and nothing added) when it would.
   */
  reserve(directory: string, day: string, bytes: number, limit: number): Promise<boolean>;
  /** Gives back what a reservation took, for a file that was not stored after all. */
  release(directory: string, day: string, bytes: number): Promise<void>;
  /** The directory's usage of `day` in bytes (0 when nothing was stored). */
  used(directory: string, day: string): Promise<number>;
  /** Removes the usage of days before `day` (YYYY-MM-DD), of every directory; how many rows went. */
  removeBefore(day: string): Promise<number>;
}
