import { JobOutcomeUnknownError, ServiceUnavailableError, ValidationError, type FieldErrors } from '../../shared/common.errors.js';
import { Messages } from '../../shared/messages.js';
import type { FileCategoryRepositoryPort } from '../../ports/file-category-repository.port.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { JobQueuePort } from '../../ports/job-queue.port.js';
import type { OrderFileRepositoryPort } from '../../ports/order-file-repository.port.js';
import { jobDeadline, whenJobSettled } from '../../jobs/job-definitions.js';
import type { OrderRepositoryPort } from '../../ports/order-repository.port.js';
import type { IdempotencyStorePort } from '../../ports/idempotency-store.port.js';
import type { ClockPort } from '../../ports/clock.port.js';
import type { UploadQuotaPort } from '../../ports/upload-quota.port.js';
import { idempotencyKeyErrors, runIdempotently } from '../../idempotency/idempotent-request.js';
import type { Order, OrderFile } from '../order.js';
import { OrderNotFoundError } from '../orders.errors.js';
import { filesCountedByQuota, parseCategoryId, quotaDay, validateFiles, type NewFileKey, type ReceivedFile, type ReceivedUpload } from './upload-rules.js';
import { NoFilesUploadedError, type AttachFilesAnswer, type AttachFilesPayload, type FailedUpload, type UploadedFile } from './attach-files.result.js';

export interface AttachFilesInput {
  directory: string;
  orderId: number;
  requestId: string;
  /** The `Idempotency-Key` header, when sent (an empty value counts as not sent). */
  idempotencyKey?: string;
  /**
   * Reads the request body; called only once the order is known to exist. It may write each file to storage as its
   * bytes arrive, at a key from `newKey` (ADR 0056); whatever this use case does not store is discarded again.
   */
  receive: (newKey: NewFileKey) => Promise<ReceivedUpload>;
}

/**
 * What became of one file. `unavailable`: the queue did not answer in time,
 * and the job writes nothing after its deadline, so the file was not stored.
 */
type Outcome = { uploaded: UploadedFile } | { failed: FailedUpload } | { unavailable: ServiceUnavailableError; name: string };

/** Bytes a file took from its directory's daily quota, given back if it is not stored. */
interface Reservation {
  day: string;
  bytes: number;
}

/** UPLOAD_QUOTA_MB_PER_DAY: bytes a directory may store per calendar day in `timeZone`. */
export interface UploadQuota {
  usage: UploadQuotaPort;
  /** 0 = no limit. */
  bytesPerDay: number;
  timeZone: string;
  clock: ClockPort;
}

/** POST /orders/{id}/files: check the order, read and validate the files, store each, report. */
export class AttachFilesUseCase {
  constructor(
    private readonly deps: {
      orders: OrderRepositoryPort;
      categories: FileCategoryRepositoryPort;
      /** Where a job whose outcome the queue lost is looked up once its deadline has passed. */
      files: OrderFileRepositoryPort;
      storage: FileStoragePort;
      queue: JobQueuePort;
      /** Where Idempotency-Key answers are kept; without it the header is checked for form only. */
      idempotency?: IdempotencyStorePort;
      maxFiles: number;
      jobTimeoutMs: number;
      newId: () => string;
      /** Unix ms; the system clock by default. */
      now?: () => number;
      /** The daily quota; none when absent. */
      quota?: UploadQuota;
    },
  ) {}

  async execute(input: AttachFilesInput): Promise<AttachFilesAnswer> {
    const order = await this.findOrder(input.directory, input.orderId);
    const upload = await input.receive(() => this.newFileKey(order));
    // Files written while the body was read that no store took (refused, replayed, duplicates) are removed before the answer.
    const taken = new Set<ReceivedFile>();
    try {
      const categoryId = await this.validate(upload, input.idempotencyKey);
      const attach = () => this.attach(order, upload.files, categoryId, input.requestId, taken);
      if (input.idempotencyKey === undefined || !this.deps.idempotency) return await attach();
      const { value, replayed } = await runIdempotently(
        this.deps.idempotency,
        { directory: order.directory, key: input.idempotencyKey },
        requestFingerprint(order, categoryId, upload.files),
        { lockMs: uploadIdempotencyLockMs(this.deps.jobTimeoutMs) },
        attach,
      );
      return replayed ? { ...value, replayed: true } : value;
    } finally {
      await Promise.all(upload.files.filter((file) => file.written && !taken.has(file)).map((file) => file.written!.discard()));
    }
  }

  /** The key of a new file of `order`: `orders/<directory>/<order>/<id>`. */
  private newFileKey(order: Order): { id: string; storageKey: string } {
    const id = this.deps.newId();
    return { id, storageKey: `orders/${order.directory}/${order.id}/${id}` };
  }

  /**
   * Stores each file whose bytes the order does not have yet; a file the
   * order already has (or an earlier part of this request) is answered with
   * the existing file and nothing is written for it. With a daily quota, the
   * files take from it in request order before any is stored; one that would
   * pass it fails, and one that is not stored after all gives its bytes back.
   */
  private async attach(
    order: Order,
    files: ReceivedFile[],
    categoryId: number | null,
    requestId: string,
    taken: Set<ReceivedFile>,
  ): Promise<AttachFilesPayload> {
    const attached = await this.attachedByContent(order);
    const reservations = await this.reserveQuota(order.directory, files, new Set(attached.keys()));
    const firstOfBytes = new Map<string, Promise<Outcome>>();
    const outcomes = await Promise.all(
      files.map(async (file) => {
        const existing = attached.get(file.sha256);
        if (existing) return { uploaded: { id: existing.id, name: file.name, categoryId: existing.categoryId, duplicateOf: existing.id } };
        const first = firstOfBytes.get(file.sha256);
        if (first) return first.then((outcome) => sameAs(outcome, file.name));
        const reservation = reservations.get(file);
        if (reservation !== null) taken.add(file);
        const stored =
          reservation === null
            ? Promise.resolve<Outcome>({ failed: { name: file.name, error: Messages.UPLOAD_QUOTA_EXCEEDED } })
            : this.store(order, file, categoryId, requestId).then((outcome) => this.settleQuota(order.directory, outcome, reservation));
        firstOfBytes.set(file.sha256, stored);
        return stored;
      }),
    );
    return this.report(order, outcomes);
  }

  /**
   * Each file that would store new bytes, in request order: its reservation,
   * or null when it would pass the day's quota. Empty without a quota. A
   * database failure midway gives back what was taken and fails the request.
   */
  private async reserveQuota(directory: string, files: ReceivedFile[], attached: ReadonlySet<string>): Promise<Map<ReceivedFile, Reservation | null>> {
    const reservations = new Map<ReceivedFile, Reservation | null>();
    const quota = this.deps.quota;
    if (!quota || quota.bytesPerDay === 0) return reservations;
    const day = quotaDay(quota.clock.now(), quota.timeZone);
    try {
      for (const file of filesCountedByQuota(files, attached)) {
        const reserved = await quota.usage.reserve(directory, day, file.size, quota.bytesPerDay);
        reservations.set(file, reserved ? { day, bytes: file.size } : null);
      }
    } catch (error) {
      for (const taken of reservations.values()) if (taken) await quota.usage.release(directory, taken.day, taken.bytes).catch(() => undefined);
      throw error;
    }
    return reservations;
  }

  /** A file that was not stored gives its bytes back (a failed give-back leaves the day overcounted, never undercounted). */
  private async settleQuota(directory: string, outcome: Outcome, reservation: Reservation | undefined): Promise<Outcome> {
    if (reservation && !('uploaded' in outcome)) {
      await this.deps.quota?.usage.release(directory, reservation.day, reservation.bytes).catch(() => undefined);
    }
    return outcome;
  }

  /** The order's files by SHA-256 (the oldest one when several share bytes). */
  private async attachedByContent(order: Order): Promise<Map<string, OrderFile>> {
    const byContent = new Map<string, OrderFile>();
    for (const file of await this.deps.files.listByOrder(order.directory, order.id)) {
      if (!byContent.has(file.sha256)) byContent.set(file.sha256, file);
    }
    return byContent;
  }

  private async findOrder(directory: string, orderId: number): Promise<Order> {
    const order = await this.deps.orders.findById(directory, orderId);
    if (!order) throw new OrderNotFoundError();
    return order;
  }

  /** Everything is checked before anything is stored; a failing request stores nothing. */
  private async validate(upload: ReceivedUpload, idempotencyKey: string | undefined): Promise<number | null> {
    if (upload.files.length === 0 && !upload.errors.files) {
      throw new ValidationError(Messages.FILES_REQUIRED, { files: [Messages.FILES_REQUIRED] });
    }
    const errors: FieldErrors = { ...upload.errors, ...validateFiles(upload.files, this.deps.maxFiles) };
    const category = parseCategoryId(upload.categoryId);
    if ('error' in category) errors.category_id = [category.error];
    else if (category.id !== null && !(await this.deps.categories.findById(category.id))) {
      errors.category_id = ['The selected category_id is invalid.'];
    }
    Object.assign(errors, idempotencyKeyErrors(idempotencyKey));
    const first = Object.values(errors)[0]?.[0];
    if (first) throw new ValidationError(first, errors);
    return 'id' in category ? category.id : null;
  }

  /**
   * Writes the bytes at the file's key, then lets a job commit its row (ADR
   * 0046). A storage failure becomes a `failed` entry; a queue that does not
   * answer in time makes the file `unavailable`. Every file gets its outcome
   * before the request is answered, so an answer never hides a file that was
   * stored. An object whose row may still come is removed only once its job
   * can write nothing more, and only if no row points at it.
   */
  private async store(order: Order, file: ReceivedFile, categoryId: number | null, requestId: string): Promise<Outcome> {
    const { id, storageKey } = file.written ?? this.newFileKey(order);
    try {
      // Written while the body was read (ADR 0056), or now from the local file.
      if (file.written) await file.written.done;
      else await this.deps.storage.putFile(storageKey, file.localPath, file.size, file.contentType, file.sha256);
    } catch (error) {
      await file.written?.discard();
      return { failed: { name: file.name, error: readable(error) } };
    }
    const deadline = jobDeadline(this.clock(), this.deps.jobTimeoutMs);
    try {
      const result = await this.deps.queue.runAndWait(
        'store-order-file',
        {
          directory: order.directory,
          orderId: order.id,
          categoryId,
          name: file.name,
          size: file.size,
          contentType: file.contentType,
          sha256: file.sha256,
          storageKey,
          requestId,
          deadline,
        },
        { timeoutMs: this.deps.jobTimeoutMs, jobId: `store-${id}` },
      );
      if ('error' in result) {
        // The job wrote no row; the object it could not use (storage failing as it looked, say) goes too.
        void this.removeUnlessStored(deadline, storageKey).catch(() => undefined);
        return { failed: { name: file.name, error: result.error } };
      }
      return { uploaded: { id: result.fileId, name: file.name, categoryId } };
    } catch (error) {
      if (error instanceof JobOutcomeUnknownError) return await this.lookUpAfter(deadline, storageKey, file.name, categoryId, error);
      // The job may still run until its deadline: the object stays until then, off the answer's path.
      void this.removeUnlessStored(deadline, storageKey).catch(() => undefined);
      if (error instanceof ServiceUnavailableError) return { unavailable: error, name: file.name };
      return { failed: { name: file.name, error: 'The file could not be stored.' } };
    }
  }

  /**
   * The queue lost the job, which may still run until its deadline: past that
   * (and a commit's time) nothing more is written, so the row tells the truth.
   * Answering sooner could call a file lost that is then stored, and its
   * resending would store it twice.
   */
  private async lookUpAfter(deadline: number, storageKey: string, name: string, categoryId: number | null, error: JobOutcomeUnknownError): Promise<Outcome> {
    const row = await this.removeUnlessStored(deadline, storageKey).catch(() => null);
    return row ? { uploaded: { id: row.id, name, categoryId } } : { unavailable: error, name };
  }

  /** Once the job can write nothing more: its row if it made one, else the object goes (the orphan reconciliation is the backstop). */
  private async removeUnlessStored(deadline: number, storageKey: string): Promise<OrderFile | null> {
    await whenJobSettled(deadline, () => this.clock());
    const row = await this.deps.files.findByStorageKey(storageKey);
    if (!row) await this.deps.storage.delete(storageKey).catch(() => undefined);
    return row;
  }

  private clock(): number {
    return (this.deps.now ?? Date.now)();
  }

  /**
   * 201 when something was stored (files the queue did not take in time are
   * listed as failed, to be sent again); when nothing was, 503 if a retry
   * may succeed, else 422 with the payload.
   */
  private report(order: Order, outcomes: Outcome[]): AttachFilesPayload {
    const uploaded = outcomes.flatMap((o) => ('uploaded' in o ? [o.uploaded] : []));
    const unavailable = outcomes.flatMap((o) => ('unavailable' in o ? [o] : []));
    if (uploaded.length === 0 && unavailable[0]) throw unavailable[0].unavailable;
    const failed = outcomes.flatMap((o) =>
      'failed' in o ? [o.failed] : 'unavailable' in o ? [{ name: o.name, error: Messages.FILE_NOT_STORED_IN_TIME }] : [],
    );
    if (uploaded.length === 0) {
      throw new NoFilesUploadedError({ message: Messages.NO_FILES_UPLOADED, orderId: order.id, uploaded, failed });
    }
    const message = failed.length === 0 ? Messages.FILES_UPLOADED : `${uploaded.length} of ${outcomes.length} files uploaded`;
    const duplicates = uploaded.filter((file) => file.duplicateOf !== undefined).length;
    return { message: duplicates === 0 ? message : `${message} (${duplicates} already attached)`, orderId: order.id, uploaded, failed };
  }
}

/**
 * How long an upload holds its Idempotency-Key at most: longer than a request can run (its jobs, and a lost job's
 * look-up after its deadline), so a live request never loses its key. A key whose release is lost (a Redis switch)
 * is held this long.
 */
export function uploadIdempotencyLockMs(jobTimeoutMs: number): number {
  return 2 * jobTimeoutMs + 60_000;
}

/**
 * What the request says, for Idempotency-Key: the order, the category and
 * each file's name and bytes, in part order (the directory is the key's scope).
 */
export function requestFingerprint(order: Order, categoryId: number | null, files: readonly ReceivedFile[]): string {
  return JSON.stringify({ orderId: order.id, categoryId, files: files.map((file) => [file.name, file.sha256]) });
}

/** A later part with the same bytes as an earlier one of the request shares its fate. */
function sameAs(outcome: Outcome, name: string): Outcome {
  if ('uploaded' in outcome) return { uploaded: { id: outcome.uploaded.id, name, categoryId: outcome.uploaded.categoryId, duplicateOf: outcome.uploaded.id } };
  if ('failed' in outcome) return { failed: { name, error: outcome.failed.error } };
  return { unavailable: outcome.unavailable, name };
}

function readable(error: unknown): string {
  return error instanceof Error && error.message ? error.message : 'The file could not be stored.';
}
