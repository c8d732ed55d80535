/**
 * Object storage for uploaded files and rendered PDFs. Keys are made by the
 * service (never from a client's file name). Errors thrown carry a message
 * readable by a client (it may end up in an upload's `failed[].error`).
 */
export interface FileStoragePort {
  /** Stores a local file's bytes under `key`. */
  putFile(key: string, localPath: string, size: number, contentType: string): Promise<void>;
  putBuffer(key: string, data: Buffer, contentType: string): Promise<void>;
  getBuffer(key: string): Promise<Buffer>;
  /** Copies an object inside the storage. */
  copy(fromKey: string, toKey: string): Promise<void>;
  /** Removes the object; a missing object is not an error. */
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /**
   * Deletes objects under `prefix` (e.g. `staging/`) last written before
   * `olderThan`, at most `limit` of them, with any half-written leftovers of
   * the storage itself: what a crash between two steps may leave behind.
   * Resolves with how many were deleted.
   */
  deleteStale(prefix: string, olderThan: Date, limit: number): Promise<number>;
  /** Throws when the storage does not answer. */
  ping(): Promise<void>;
}
