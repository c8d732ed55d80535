import { ValidationError } from '../shared/common.errors.js';
import { DomainError } from '../shared/domain-error.js';
import { Messages } from '../shared/messages.js';

export class ExportNotFoundError extends DomainError {
  readonly code = 'EXPORT_NOT_FOUND';
  constructor() {
    super('Export not found');
  }
}

/** The archive is not there yet (queued, running or failed): 409. */
export class ExportNotReadyError extends DomainError {
  readonly code = 'EXPORT_NOT_READY';
  constructor() {
    super('Export is not ready.');
  }
}

/** The archive was made but its retention ran out: 410. */
export class ExportExpiredError extends DomainError {
  readonly code = 'EXPORT_EXPIRED';
  constructor() {
    super('Export has expired.');
  }
}

/** The directory already has EXPORT_MAX_ACTIVE exports queued or running: 429 with Retry-After. */
export class TooManyExportsError extends DomainError {
  readonly code = 'TOO_MANY_EXPORTS';
  constructor(readonly retryAfterSeconds: number) {
    super('Too many exports in progress.');
  }
}

/** The directory's kept archives already reach EXPORT_STORAGE_MB_PER_DIRECTORY: 429 with Retry-After (until the oldest expires). */
export class ExportStorageQuotaError extends DomainError {
  readonly code = 'EXPORT_STORAGE_QUOTA_EXCEEDED';
  constructor(readonly retryAfterSeconds: number) {
    super('Export storage quota exceeded.');
  }
}

/** More invoices match than one export may hold (EXPORT_MAX_INVOICES): a 422 on `filters`, as any invalid filter is. */
export class ExportTooLargeError extends ValidationError {
  constructor(
    readonly maxInvoices: number,
    readonly total: number,
  ) {
    super(Messages.INVALID_DATA, { filters: [`More than ${maxInvoices} invoices match these filters (${total}); narrow them or make several exports.`] });
  }
}
