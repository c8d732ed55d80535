import { DomainError } from '../shared/domain-error.js';
import { Messages } from '../shared/messages.js';

export class InvoiceNotFoundError extends DomainError {
  readonly code = 'INVOICE_NOT_FOUND';
  constructor() {
    super(Messages.INVOICE_NOT_FOUND);
  }
}
