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
 * Storage reconciliation: removes objects under `orders/` that no `order_files` row points at, only past `maxAgeMs`, when
 * no writer can still commit their row; a few pages a run, the walk's place kept between runs
 * (docs/contribute/decisions/0027-orphan-object-reconciliation.md).
 */
export class RemoveOrphanObjectsUseCase {
  /** The page marker where the next run goes on; null: from the start. */
  private after: string | null = null;

  constructor(
    private readonly deps: {
      storage: FileStoragePort;
      files: OrderFileRepositoryPort;
      /** Older than this, whether an object has a row is final (see the class); the longest job deadline, with room. */
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
