import { DomainError } from '../../shared/domain-error.js';
import { Messages } from '../../shared/messages.js';

/** No such file on this order of this directory (another directory's files answer the same). */
export class OrderFileNotFoundError extends DomainError {
  readonly code = 'FILE_NOT_FOUND';
  constructor() {
    super(Messages.FILE_NOT_FOUND);
  }
}

/** A file link token that this service did not sign, or that was altered. */
export class FileLinkInvalidError extends DomainError {
  readonly code = 'FILE_LINK_INVALID';
  constructor() {
    super(Messages.FILE_LINK_INVALID);
  }
}

/** A genuine file link whose API key was revoked or has expired since: the link ends with the key. */
export class FileLinkRevokedError extends DomainError {
  readonly code = 'FILE_LINK_REVOKED';
  constructor() {
    super(Messages.FILE_LINK_REVOKED);
  }
}

/** A genuine file link whose time is up. */
export class FileLinkExpiredError extends DomainError {
  readonly code = 'FILE_LINK_EXPIRED';
  constructor() {
    super(Messages.FILE_LINK_EXPIRED);
  }
}
