import { DomainError } from '../shared/domain-error.js';
import { Messages } from '../shared/messages.js';

export class InvoiceNotFoundError extends DomainError {
  readonly code = 'INVOICE_NOT_FOUND';
  constructor() {
    super(Messages.INVOICE_NOT_FOUND);
  }
}

/**
 * The document could not be written from this invoice's data (a writer refused it): the same request would fail the
 * same way, so it is a 500, never a 503 that clients retry for ever (issue 35). The detail goes to the log only.
 */
export class DocumentNotWritableError extends DomainError {
  readonly code = 'DOCUMENT_NOT_WRITABLE';
  constructor(
    readonly document: string,
    readonly detail: string,
  ) {
    super(Messages.SERVER_ERROR);
  }
}
