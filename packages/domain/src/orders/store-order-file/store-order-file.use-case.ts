import { LATE_JOB_ERROR, whenJobSettled, type JobPayloads, type JobResults } from '../../jobs/job-definitions.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { OrderFileRepositoryPort } from '../../ports/order-file-repository.port.js';

type StoreJob = JobPayloads['store-order-file'];
type StoreResult = JobResults['store-order-file'];

/**
 * Job handler: promotes a staged upload to a stored file, an object plus its
 * row, never one without the other. Safe to run twice: the key is fixed by
 * the payload and the row is inserted once per storage key. The object is
 * written first and removed again only when no row can point at it.
 */
export class StoreOrderFileUseCase {
  constructor(
    private readonly deps: {
      files: OrderFileRepositoryPort;
      storage: FileStoragePort;
      /** Unix ms; the system clock by default. */
      now?: () => number;
    },
  ) {}

  async execute(job: StoreJob): Promise<StoreResult> {
    const existing = await this.deps.files.findByStorageKey(job.storageKey);
    if (existing) return { fileId: existing.id };
    // An earlier run that was killed after its copy may have left the object behind.
    if (this.late(job)) return this.giveUp(job);
    try {
      await this.deps.storage.copy(job.stagingKey, job.storageKey);
    } catch (error) {
      return { error: error instanceof Error && error.message ? error.message : 'The file could not be stored.' };
    }
    if (this.late(job)) return this.giveUp(job);
    let row;
    try {
      row = await this.deps.files.insertOnce(
        {
          directory: job.directory,
          orderId: job.orderId,
          categoryId: job.categoryId,
          name: job.name,
          size: job.size,
          contentType: job.contentType,
          sha256: job.sha256,
          storageKey: job.storageKey,
          createdAt: Math.floor(this.clock() / 1000),
        },
        job.deadline,
      );
    } catch (error) {
      // The insert may have committed before its answer was lost: then the file is stored.
      const recorded = await this.deps.files.findByStorageKey(job.storageKey).catch(() => undefined);
      if (recorded) return { fileId: recorded.id };
      // The object goes only when surely no row points at it; when that cannot be read, it stays:
      // a spare object harms no one, a row without its object would.
      if (recorded === null) await this.deps.storage.delete(job.storageKey).catch(() => undefined);
      throw error;
    }
    return row ? { fileId: row.id } : this.giveUp(job);
  }

  /**
   * Past the deadline: the object goes unless a row (another run's, in time)
   * points at it. That run may have passed its own deadline check a moment
   * ago and be committing, so the last look comes a commit's time after the
   * deadline.
   */
  private async giveUp(job: StoreJob): Promise<StoreResult> {
    await whenJobSettled(job.deadline, () => this.clock());
    const row = await this.deps.files.findByStorageKey(job.storageKey);
    if (row) return { fileId: row.id };
    await this.deps.storage.delete(job.storageKey).catch(() => undefined);
    return { error: LATE_JOB_ERROR };
  }

  private clock(): number {
    return (this.deps.now ?? Date.now)();
  }

  private late(job: StoreJob): boolean {
    return this.clock() > job.deadline;
  }
}
