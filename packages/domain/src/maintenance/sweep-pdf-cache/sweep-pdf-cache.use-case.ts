import { PDF_CACHE_PREFIX, pdfCacheOwner } from '../../invoices/invoice-pdf-cache/pdf-version.js';
import type { FileStoragePort, StoredObject } from '../../ports/file-storage.port.js';

export interface SweepPdfCacheResult {
  /** Cached PDFs looked at in this run. */
  looked: number;
  /** Removed for being older than the age bound. */
  expired: number;
  /** Removed, oldest first, to bring the count down to the bound. */
  overCount: number;
  /** True when this run reached the end of `pdf-cache/`; the next run starts from the beginning again. */
  walkedToEnd: boolean;
}

export type PdfCacheRemoval = 'age' | 'count';

/** Hex digits of a version read as a position in the key space (13 digits: 52 bits, exact in a double). */
const POSITION_DIGITS = 13;
const POSITION_SPAN = 16 ** POSITION_DIGITS;

/**
 * Keeps the PDF cache bounded by age and by count, a bounded amount of work a run: any cached PDF may go at any moment (it
 * is only rendered again), and a stretch of the hash-named key space keeps its share of the count (docs/contribute/decisions/0029-pdf-cache-by-printed-version.md).
 */
export class SweepPdfCacheUseCase {
  /** The page marker where the next run goes on; null: from the start. */
  private after: string | null = null;

  constructor(
    private readonly deps: {
      storage: FileStoragePort;
      /** A cached PDF older than this is removed (PDF_CACHE_MAX_AGE_HOURS). */
      maxAgeMs: number;
      /** At most this many cached PDFs are kept (PDF_CACHE_MAX_OBJECTS). */
      maxObjects: number;
      /** Objects per listing (S3 answers 1,000 at most). */
      pageSize?: number;
      /** Listings per run. */
      maxPages?: number;
      /** Removals per run. */
      maxDeletes?: number;
      /** Told of each object removed, as it goes (for a metric). */
      onRemoved?: (key: string, reason: PdfCacheRemoval) => void;
      now?: () => number;
    },
  ) {}

  async execute(): Promise<SweepPdfCacheResult> {
    const cutoff = (this.deps.now ?? Date.now)() - this.deps.maxAgeMs;
    const pageSize = this.deps.pageSize ?? 1_000;
    const maxPages = this.deps.maxPages ?? 20;
    let budget = this.deps.maxDeletes ?? 2_000;
    const startedAt = this.after;

    const seen: StoredObject[] = [];
    let walkedToEnd = false;
    for (let page = 0; page < maxPages; page++) {
      const { objects, next } = await this.deps.storage.listObjects(PDF_CACHE_PREFIX, { limit: pageSize, after: this.after });
      seen.push(...objects);
      this.after = next;
      if (next === null) {
        walkedToEnd = true;
        break;
      }
    }

    const result: SweepPdfCacheResult = { looked: seen.length, expired: 0, overCount: 0, walkedToEnd };
    const kept: StoredObject[] = [];
    for (const object of seen) {
      if (object.writtenAt.getTime() < cutoff && budget > 0) {
        await this.remove(object.key, 'age');
        result.expired += 1;
        budget -= 1;
      } else {
        kept.push(object);
      }
    }

    const share = positionOf(walkedToEnd ? null : this.after, 1) - positionOf(startedAt, 0);
    const allowed = Math.floor(this.deps.maxObjects * Math.max(0, Math.min(1, share)));
    const excess = kept.length - allowed;
    if (excess > 0) {
      for (const object of fairRemovals(kept, Math.min(excess, budget))) {
        await this.remove(object.key, 'count');
        result.overCount += 1;
      }
    }
    return result;
  }

  private async remove(key: string, reason: PdfCacheRemoval): Promise<void> {
    await this.deps.storage.delete(key);
    this.deps.onRemoved?.(key, reason);
  }
}

/**
 * The `count` objects to remove so that each directory keeps a fair share: always from the directory that holds the
 * most (oldest first within it), so a directory below the others' counts loses nothing while one holds more.
 */
function fairRemovals(objects: StoredObject[], count: number): StoredObject[] {
  const byOwner = new Map<string, StoredObject[]>();
  for (const object of objects) {
    const owner = pdfCacheOwner(object.key);
    const list = byOwner.get(owner) ?? [];
    list.push(object);
    byOwner.set(owner, list);
  }
  const owners = [...byOwner.values()].map((list) => list.sort((a, b) => a.writtenAt.getTime() - b.writtenAt.getTime() || (a.key < b.key ? -1 : 1)));
  const removed: StoredObject[] = [];
  const taken = owners.map(() => 0);
  while (removed.length < count) {
    let largest = -1;
    for (let i = 0; i < owners.length; i++) {
      const left = owners[i]!.length - taken[i]!;
      if (left > 0 && (largest < 0 || left > owners[largest]!.length - taken[largest]!)) largest = i;
    }
    if (largest < 0) break;
    removed.push(owners[largest]![taken[largest]!]!);
    taken[largest]! += 1;
  }
  return removed;
}

/** Where `key` (`pdf-cache/<hex>.pdf`) sits in the key space, 0..1; `fallback` for no key or one that is not a version. */
function positionOf(key: string | null, fallback: number): number {
  if (key === null || !key.startsWith(PDF_CACHE_PREFIX)) return fallback;
  const digits = key.slice(PDF_CACHE_PREFIX.length, PDF_CACHE_PREFIX.length + POSITION_DIGITS);
  if (!/^[0-9a-f]+$/.test(digits) || digits.length < POSITION_DIGITS) return fallback;
  return (Number.parseInt(digits, 16) + 1) / POSITION_SPAN;
}
