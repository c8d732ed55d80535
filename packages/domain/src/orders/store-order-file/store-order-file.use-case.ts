import { LATE_JOB_ERROR, type JobPayloads, type JobResults } from '../../jobs/job-definitions.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { OrderFileRepositoryPort } from '../../ports/order-file-repository.port.js';

/**
 * Job handler: promotes a staged upload to a stored file, an object plus its
 * row, never one without the other. Safe to run twice: the key is fixed by
 * the payload and the row is inserted once per storage key.
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

  async execute(job: JobPayloads['store-order-file']): Promise<JobResults['store-order-file']> {
    const existing = await this.deps.files.findByStorageKey(job.storageKey);
    if (existing) return { fileId: existing.id };
    if (this.late(job)) return { error: LATE_JOB_ERROR };
    try {
      await this.deps.storage.copy(job.stagingKey, job.storageKey);
    } catch (error) {
      return { error: error instanceof Error && error.message ? error.message : 'The file could not be stored.' };
    }
    if (this.late(job)) {
      await this.deps.storage.delete(job.storageKey).catch(() => undefined);
      return { error: LATE_JOB_ERROR };
    }
    try {
      const row = await this.deps.files.insertOnce({
        directory: job.directory,
        orderId: job.orderId,
        categoryId: job.categoryId,
        name: job.name,
        size: job.size,
        contentType: job.contentType,
        sha256: job.sha256,
        storageKey: job.storageKey,
        createdAt: Math.floor(this.clock() / 1000),
      });
      return { fileId: row.id };
    } catch (error) {
      await this.deps.storage.delete(job.storageKey).catch(() => undefined);
      throw error;
    }
  }

  private clock(): number {
    return (this.deps.now ?? Date.now)();
  }

  private late(job: JobPayloads['store-order-file']): boolean {
    return this.clock() > job.deadline;
  }
}
