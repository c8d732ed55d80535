/** One page of a walk over the objects under a prefix (see FileStoragePort.listOlderThan). */
export interface StoragePage {
  /** Keys of the page's objects last written before the cut-off, in the storage's listing order. */
  keys: string[];
  /** Where the next page starts (pass it back as `after`); null when the prefix was walked to its end. */
  next: string | null;
}

/** An object named by a listing, with when it was last written. */
export interface StoredObject {
  key: string;
  writtenAt: Date;
}

/** One page of a listing with write times (see FileStoragePort.listObjects). */
export interface StoredObjectPage {
  objects: StoredObject[];
  /** Where the next page starts (pass it back as `after`); null when the prefix was walked to its end. */
  next: string | null;
}

/** Inclusive byte offsets into a stored object, as in an HTTP `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end: number;
}

/** How a presigned link answers: for how long, and the name and type it sends the bytes with. */
export interface PresignOptions {
  ttlSeconds: number;
  /** The whole `Content-Disposition` value the link answers with. */
  contentDisposition: string;
  contentType: string;
}

/** What is known of an object's bytes once the last of them was handed to a StreamedWrite. */
export interface StreamedWriteEnd {
  size: number;
  /** SHA-256 (hex) of all the bytes. */
  sha256: string;
  contentType: string;
}

/**
 * An object written while its bytes still arrive (an upload's PUT that starts
 * before the request is read to its end, ADR 0056). Nothing is visible at its
 * key before `end` resolves; `abort` leaves neither an object nor an
 * incomplete multipart upload behind.
 */
export interface StreamedWrite {
  /** The next bytes, in order. Resolves when more may be handed over (back-pressure); rejects once the write failed. */
  write(chunk: Buffer): Promise<void>;
  /** No more bytes: resolves once the object is whole at its key. */
  end(info: StreamedWriteEnd): Promise<void>;
  /**
   * Gives the object up, at any point (also after `end` resolved): waits for the requests in flight, then aborts the
   * multipart upload or removes the object. Never throws; what it could not remove is the orphan reconciliation's.
   */
  abort(): Promise<void>;
}

/**
 * Object storage for uploaded files and rendered PDFs. Keys are made by the
 * service (never from a client's file name). Errors thrown carry a message
 * readable by a client (it may end up in an upload's `failed[].error`).
 */
export interface FileStoragePort {
  /**
   * Stores a local file's bytes under `key`. `sha256` (hex), when known, lets the storage check what it received
   * and spares it hashing the bytes again.
   */
  putFile(key: string, localPath: string, size: number, contentType: string, sha256?: string): Promise<void>;
  /**
   * Starts writing `key` from bytes that are still arriving. `contentType` settles once the head of the bytes was
   * sniffed; nothing is committed before it has. Absent where a write from a local file costs no more (local disk).
   */
  beginWrite?(key: string, contentType: Promise<string>): StreamedWrite;
  putBuffer(key: string, data: Buffer, contentType: string): Promise<void>;
  /** The object's bytes; throws StoredObjectMissingError when it is missing, another error when storage fails. */
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
  /**
   * One bounded page of the objects under `prefix`: at most `limit` objects
   * are looked at (one listing request on S3), starting after the marker
   * `after` (null: from the start), and those last written before
   * `olderThan` are named. A page may name none and still have a `next`.
   * Only keys the service could have made are named (see storage keys);
   * nothing is deleted. Throws when the storage does not answer.
   */
  listOlderThan(prefix: string, olderThan: Date, page: { limit: number; after: string | null }): Promise<StoragePage>;
  /**
   * One bounded page of the objects under `prefix` with their write times, in
   * the same order and with the same marker as `listOlderThan`: at most
   * `limit` objects (one listing request on S3), only keys the service could
   * have made. Throws when the storage does not answer.
   */
  listObjects(prefix: string, page: { limit: number; after: string | null }): Promise<StoredObjectPage>;
  /** Throws when the storage does not answer. */
  ping(): Promise<void>;

  // Streaming reads (order files out): nothing here holds a whole object in memory.
  /** The object's size in bytes; throws StoredObjectMissingError when it is missing. */
  stat(key: string): Promise<{ size: number }>;
  /**
   * The object's bytes as a stream, or only `range` (inclusive, within the
   * object). The stream is opened when the promise resolves: a missing object
   * rejects it rather than failing the stream later.
   */
  getStream(key: string, range?: ByteRange): Promise<NodeJS.ReadableStream>;
  /**
   * A URL that answers an unauthenticated GET with the object's bytes until
   * `ttlSeconds` from now, with the given disposition and type; null when the
   * storage has no such URLs (local files: the API signs its own links).
   */
  presignGet(key: string, options: PresignOptions): Promise<string | null>;
}
