import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { OrderFileRepositoryPort } from '../../ports/order-file-repository.port.js';

/** Where stored order files live: `orders/<directory>/<order id>/<uuid>`, each with one `order_files` row. */
export const ORDER_FILES_PREFIX = 'orders/';

export interface RemoveOrphanObjectsResult {
  /** Objects older than the bound that were checked against the rows. */
  checked: number;
  /** Of those, the ones no row pointed at, now removed. */
  removed: number;
  /** True when this run reached the end of `orders/`; the next run starts from the beginning again. */
  walkedToEnd: boolean;
}

/**
 * Storage reconciliation: removes objects under `orders/` that no
 * `order_files` row points at. A stored file is an object plus its row; the
 * job that writes them removes the object again when its row cannot be
 * written, but when storage is down at that moment too, the object stays.
 * Such an orphan is never served (files are reached through their rows) and
 * only holds space; this finds it and removes it.
 *
 * Why no upload in flight can lose its object: an object under `orders/` is
 * written by the store-order-file job only before that job's deadline (a job
 * past it copies nothing), and its row commits only before the same deadline
 * (checked inside the insert's transaction), which is at most
 * JOB_TIMEOUT_MS after the request began, hence before the object was
 * written plus JOB_TIMEOUT_MS. So once an object is older than `maxAgeMs`
 * (the housekeeping's bound: an hour and at least twice JOB_TIMEOUT_MS, with
 * room for a commit and for clocks that differ by minutes), whether it has a
 * row is final: a row that is not there now can never come, and a row that
 * is there is never deleted by the service. A rewrite of the same key (a job
 * that runs again) makes the object younger, never older, so it only moves
 * it out of reach. The check (rows for a page of keys) and the removal
 * therefore cannot race with any writer, and an object with a row is never
 * removed. A failure to list, read rows or remove ends the run with an
 * error and keeps the walk's place, so the next run tries the same page again.
 *
 * Work is bounded per run: at most `maxPages` pages of `pageSize` objects are
 * looked at, and the walk's place (the storage's page marker) is kept
 * between runs of this instance, so a large bucket is covered over several
 * runs and then walked again from the start.
 */
export class RemoveOrphanObjectsUseCase {
  /** The page marker where the next run goes on; null: from the start. */
  private after: string | null = null;

  constructor(
    private readonly deps: {
      storage: FileStoragePort;
      files: OrderFileRepositoryPort;
      /** Older than this, whether an object has a row is final (see above); the longest job deadline, with room. */
      maxAgeMs: number;
      /** Objects looked at per page (one listing request on S3, which answers at most 1,000). */
      pageSize?: number;
      /** Pages per run: with the page size, the bound on one run's work. */
      maxPages?: number;
      /** Told of each object removed, as it goes (for a metric). */
      onRemoved?: (key: string) => void;
      now?: () => number;
    },
  ) {}

  async execute(): Promise<RemoveOrphanObjectsResult> {
    const olderThan = new Date((this.deps.now ?? Date.now)() - this.deps.maxAgeMs);
    const pageSize = this.deps.pageSize ?? 1_000;
    const maxPages = this.deps.maxPages ?? 5;
    const result: RemoveOrphanObjectsResult = { checked: 0, removed: 0, walkedToEnd: false };
    for (let page = 0; page < maxPages; page++) {
      const { keys, next } = await this.deps.storage.listOlderThan(ORDER_FILES_PREFIX, olderThan, { limit: pageSize, after: this.after });
      const paired = keys.length > 0 ? await this.deps.files.keysWithRows(keys) : new Set<string>();
      for (const key of keys) {
        if (paired.has(key)) continue;
        await this.deps.storage.delete(key);
        result.removed += 1;
        this.deps.onRemoved?.(key);
      }
      result.checked += keys.length;
      // Moved on only once the whole page is done, so a failed run repeats its page.
      this.after = next;
      if (next === null) {
        result.walkedToEnd = true;
        break;
      }
    }
    return result;
  }
}
