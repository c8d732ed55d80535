import { LATE_JOB_ERROR, whenJobSettled, type JobPayloads, type JobResults, type JobRun } from '../../jobs/job-definitions.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { OrderFileRepositoryPort } from '../../ports/order-file-repository.port.js';
import { stageTimer } from '../../jobs/stage-timer.js';

type StoreJob = JobPayloads['store-order-file'];
type StoreResult = JobResults['store-order-file'];

/**
 * The stages of a store job, timed for the operator (`onStage`): `lookup` (is the file's row there already), `check`
 * (the object the API wrote is there with the file's size: a HEAD, after a copy for an older API's staging key),
 * `commit` (the row inserted and committed). A job's first run commits only (see `execute`).
 */
export type StoreJobStage = 'lookup' | 'check' | 'commit';

/**
 * Job handler: makes an upload a stored file by committing its row, once the
 * object the API wrote at the file's key is there (ADR 0046); never a row
 * without its object. Safe to run twice: the row is inserted once per storage
 * key. The object is removed again only when no row can point at it. A job of
 * an older API names a staging key: its bytes are copied to the file's key
 * first, as that release did.
 */
export class StoreOrderFileUseCase {
  constructor(
    private readonly deps: {
      files: OrderFileRepositoryPort;
      storage: FileStoragePort;
      /** Unix ms; the system clock by default. */
      now?: () => number;
      /** Told how long each stage of a job took (ms), as it ends; stages a job skips are not told. */
      onStage?: (stage: StoreJobStage, ms: number) => void;
    },
  ) {}

  /**
   * The first run of a job that the API sent once its PUT had ended (no staging key) commits at once: the object is
   * there, since the API wrote it before sending the job and only this job or a caller past its deadline removes it,
   * and a row cannot be there yet (ADR 0046, amended). Any other run (a retry, a job taken over from a stalled
   * worker, or `run` unknown) first looks for its row and then checks the object, since an earlier run may have
   * removed it.
   */
  async execute(job: StoreJob, run?: JobRun): Promise<StoreResult> {
    const stage = stageTimer(this.deps.onStage, () => this.clock());
    if (run?.firstRun !== true || job.stagingKey !== undefined) {
      const answer = await this.lookFirst(job, stage);
      if (answer) return answer;
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
    stage('commit');
    return row ? { fileId: row.id } : this.giveUp(job);
  }

  /**
   * A run that may not be the job's first: its row if one is there already, the object copied from an older API's
   * staging key, then checked (a HEAD) for the file's size. An answer ends the job; null goes on to the commit.
   */
  private async lookFirst(job: StoreJob, stage: (stage: StoreJobStage) => void): Promise<StoreResult | null> {
    const existing = await this.deps.files.findByStorageKey(job.storageKey);
    stage('lookup');
    if (existing) return { fileId: existing.id };
    if (this.late(job)) return this.giveUp(job);
    try {
      if (job.stagingKey !== undefined && job.stagingKey !== job.storageKey) await this.deps.storage.copy(job.stagingKey, job.storageKey);
      // A retry after an earlier run's clean-up, or bytes that never arrived, find nothing: no row for them.
      const { size } = await this.deps.storage.stat(job.storageKey);
      stage('check');
      return size === job.size ? null : { error: `The stored object holds ${size} bytes, not ${job.size}.` };
    } catch (error) {
      return { error: error instanceof Error && error.message ? error.message : 'The file could not be stored.' };
    }
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
