import { DomainError } from '../../shared/domain-error.js';
import { Messages } from '../../shared/messages.js';

export interface UploadedFile {
  id: number;
  name: string;
  categoryId: number | null;
  /**
   * Set when the bytes were already attached to the order (by an earlier
   * upload, or by another part of this one): nothing was stored again, and
   * `id` and `categoryId` are the existing file's.
   */
  duplicateOf?: number;
}

export interface FailedUpload {
  name: string;
  error: string;
}

export interface AttachFilesPayload {
  message: string;
  orderId: number;
  uploaded: UploadedFile[];
  failed: FailedUpload[];
}

/** What `POST /orders/{id}/files` answers: `replayed` when it is the kept answer of an earlier request with the same Idempotency-Key. */
export type AttachFilesAnswer = AttachFilesPayload & { replayed?: true };

/** No file could be stored: answered 422 with the payload as `data`. */
export class NoFilesUploadedError extends DomainError {
  readonly code = 'NO_FILES_UPLOADED';
  override readonly details: AttachFilesPayload;
  constructor(payload: AttachFilesPayload) {
    super(Messages.NO_FILES_UPLOADED);
    this.details = payload;
  }
}
