import { JobOutcomeUnknownError, ServiceUnavailableError, ValidationError, type FieldErrors } from '../../shared/common.errors.js';
import { Messages } from '../../shared/messages.js';
import type { FileCategoryRepositoryPort } from '../../ports/file-category-repository.port.js';
import type { FileStoragePort } from '../../ports/file-storage.port.js';
import type { JobQueuePort } from '../../ports/job-queue.port.js';
import type { OrderFileRepositoryPort } from '../../ports/order-file-repository.port.js';
import { jobDeadline, whenJobSettled } from '../../jobs/job-definitions.js';
import type { OrderRepositoryPort } from '../../ports/order-repository.port.js';
import type { Order } from '../order.js';
import { OrderNotFoundError } from '../orders.errors.js';
import { parseCategoryId, validateFiles, type ReceivedFile, type ReceivedUpload } from './upload-rules.js';
import { NoFilesUploadedError, type AttachFilesPayload, type FailedUpload, type UploadedFile } from './attach-files.result.js';

export interface AttachFilesInput {
  directory: string;
  orderId: number;
  requestId: string;
  /** Reads the request body; called only once the order is known to exist. */
  receive: () => Promise<ReceivedUpload>;
}

/**
 * What became of one file. `unavailable`: the queue did not answer in time,
 * and the job writes nothing after its deadline, so the file was not stored.
 */
type Outcome = { uploaded: UploadedFile } | { failed: FailedUpload } | { unavailable: ServiceUnavailableError; name: string };

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
      maxFiles: number;
      jobTimeoutMs: number;
      newId: () => string;
      /** Unix ms; the system clock by default. */
      now?: () => number;
    },
  ) {}

  async execute(input: AttachFilesInput): Promise<AttachFilesPayload> {
    const order = await this.findOrder(input.directory, input.orderId);
    const upload = await input.receive();
    const categoryId = await this.validate(upload);
    const outcomes = await Promise.all(upload.files.map((file) => this.store(order, file, categoryId, input.requestId)));
    return this.report(order, outcomes);
  }

  private async findOrder(directory: string, orderId: number): Promise<Order> {
    const order = await this.deps.orders.findById(directory, orderId);
    if (!order) throw new OrderNotFoundError();
    return order;
  }

  /** Everything is checked before anything is stored; a failing request stores nothing. */
  private async validate(upload: ReceivedUpload): Promise<number | null> {
    if (upload.files.length === 0 && !upload.errors.files) {
      throw new ValidationError(Messages.FILES_REQUIRED, { files: [Messages.FILES_REQUIRED] });
    }
    const errors: FieldErrors = { ...upload.errors, ...validateFiles(upload.files, this.deps.maxFiles) };
    const category = parseCategoryId(upload.categoryId);
    if ('error' in category) errors.category_id = [category.error];
    else if (category.id !== null && !(await this.deps.categories.findById(category.id))) {
      errors.category_id = ['The selected category_id is invalid.'];
    }
    const first = Object.values(errors)[0]?.[0];
    if (first) throw new ValidationError(first, errors);
    return 'id' in category ? category.id : null;
  }

  /**
   * Stages the bytes, then lets a job promote them to a row plus an object.
   * A storage failure becomes a `failed` entry; a queue that does not answer
   * in time makes the file `unavailable`. Every file gets its outcome before
   * the request is answered, so an answer never hides a file that was stored.
   */
  private async store(order: Order, file: ReceivedFile, categoryId: number | null, requestId: string): Promise<Outcome> {
    const id = this.deps.newId();
    const stagingKey = `staging/${id}`;
    const storageKey = `orders/${order.directory}/${order.id}/${id}`;
    try {
      await this.deps.storage.putFile(stagingKey, file.localPath, file.size, file.contentType);
    } catch (error) {
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
          stagingKey,
          storageKey,
          requestId,
          deadline,
        },
        { timeoutMs: this.deps.jobTimeoutMs, jobId: `store-${id}` },
      );
      if ('error' in result) return { failed: { name: file.name, error: result.error } };
      return { uploaded: { id: result.fileId, name: file.name, categoryId } };
    } catch (error) {
      if (error instanceof JobOutcomeUnknownError) return await this.lookUpAfter(deadline, storageKey, file.name, categoryId, error);
      if (error instanceof ServiceUnavailableError) return { unavailable: error, name: file.name };
      return { failed: { name: file.name, error: 'The file could not be stored.' } };
    } finally {
      // Not before the job's deadline when its outcome is unknown: it may still need the staged bytes.
      await this.deps.storage.delete(stagingKey).catch(() => undefined);
    }
  }

  /**
   * The queue lost the job, which may still run until its deadline: past that
   * (and a commit's time) nothing more is written, so the row tells the truth.
   * Answering sooner could call a file lost that is then stored, and its
   * resending would store it twice.
   */
  private async lookUpAfter(deadline: number, storageKey: string, name: string, categoryId: number | null, error: JobOutcomeUnknownError): Promise<Outcome> {
    await whenJobSettled(deadline, () => this.clock());
    const row = await this.deps.files.findByStorageKey(storageKey).catch(() => null);
    return row ? { uploaded: { id: row.id, name, categoryId } } : { unavailable: error, name };
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
    const failed = outcomes.flatMap((o) => ('failed' in o ? [o.failed] : 'unavailable' in o ? [{ name: o.name, error: Messages.FILE_NOT_STORED_IN_TIME }] : []));
    if (uploaded.length === 0) {
      throw new NoFilesUploadedError({ message: Messages.NO_FILES_UPLOADED, orderId: order.id, uploaded, failed });
    }
    const message = failed.length === 0 ? Messages.FILES_UPLOADED : `${uploaded.length} of ${outcomes.length} files uploaded`;
    return { message, orderId: order.id, uploaded, failed };
  }
}

function readable(error: unknown): string {
  return error instanceof Error && error.message ? error.message : 'The file could not be stored.';
}
