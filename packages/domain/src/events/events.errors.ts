import { DomainError } from '../shared/domain-error.js';
import { Messages } from '../shared/messages.js';

/** Retention removed events past the client's cursor: it must resync from the list (410). */
export class EventsExpiredError extends DomainError {
  readonly code = 'EVENTS_EXPIRED';
  constructor() {
    super(Messages.EVENTS_EXPIRED);
  }
}

/**
 * The cursor lies past the end of a feed restored from a backup: the events it passed were lost with the
 * restore, so the client must resync (410; docs/contribute/decisions/0051-after-a-restore.md).
 */
export class EventsCursorRestoredError extends DomainError {
  readonly code = 'EVENTS_CURSOR_RESTORED';
  constructor() {
    super(Messages.EVENTS_CURSOR_RESTORED);
  }
}

/** The directory already holds EVENTS_MAX_WAITING long polls on this process (429, try again in a second). */
export class TooManyWaitingRequestsError extends DomainError {
  readonly code = 'TOO_MANY_WAITING_REQUESTS';
  readonly retryAfterSeconds = 1;
  constructor() {
    super(Messages.TOO_MANY_WAITING_REQUESTS);
  }
}
