import { DomainError } from '../shared/domain-error.js';
import { Messages } from '../shared/messages.js';

/** Retention removed events past the client's cursor: it must resync from the list (410). */
export class EventsExpiredError extends DomainError {
  readonly code = 'EVENTS_EXPIRED';
  constructor() {
    super(Messages.EVENTS_EXPIRED);
  }
}
