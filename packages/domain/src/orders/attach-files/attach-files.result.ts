import { DomainError } from '../../shared/domain-error.js';
import { Messages } from '../../shared/messages.js';

export interface UploadedFile {
  id: number;
  name: string;
  categoryId: number | null;
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

/** No file could be stored: answered 422 with the payload as `data`. */
export class NoFilesUploadedError extends DomainError {
  readonly code = 'NO_FILES_UPLOADED';
  override readonly details: AttachFilesPayload;
  constructor(payload: AttachFilesPayload) {
    super(Messages.NO_FILES_UPLOADED);
    this.details = payload;
  }
}
