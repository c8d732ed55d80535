import { DomainError } from '../shared/domain-error.js';
import { Messages } from '../shared/messages.js';

/** Another request with the same Idempotency-Key and the same content is still running: try again shortly. */
export class IdempotencyKeyInUseError extends DomainError {
  readonly code = 'IDEMPOTENCY_KEY_IN_USE';
  readonly retryAfterSeconds = 1;
  constructor() {
    super(Messages.IDEMPOTENCY_KEY_IN_USE);
  }
}
