import { DomainError } from './domain-error.js';
import { Messages } from './messages.js';

/** Field name -> messages, as returned in a 422 envelope's `errors`. */
export type FieldErrors = Record<string, string[]>;

/** Input failed validation. `message` is the envelope message. */
export class ValidationError extends DomainError {
  readonly code = 'VALIDATION_FAILED';
  constructor(
    message: string,
    readonly errors: FieldErrors = {},
  ) {
    super(message);
  }

  static invalidData(errors: FieldErrors): ValidationError {
    return new ValidationError(Messages.INVALID_DATA, errors);
  }
}

export class AuthenticationFailedError extends DomainError {
  readonly code = 'AUTHENTICATION_FAILED';
  constructor() {
    super(Messages.AUTHENTICATION_FAILED);
  }
}

/**
 * A dependency (queue, worker, storage, database) did not answer in time.
 * Answered as 503 with Retry-After; nothing was half-written.
 */
export class ServiceUnavailableError extends DomainError {
  readonly code = 'SERVICE_UNAVAILABLE';
  constructor(
    readonly reason: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(Messages.SERVICE_UNAVAILABLE);
  }
}

/**
 * The queue lost track of a job it had (perhaps) taken: the job may still
 * run, and write, until its deadline. A caller that must know what was
 * written waits for that deadline and looks; to anyone else it is a 503.
 */
export class JobOutcomeUnknownError extends ServiceUnavailableError {}

/**
 * What every storage adapter throws for a key with no object (reads, stat, copy), so a caller tells a miss from a
 * failure without asking again. Its message is safe to show a client.
 */
export class StoredObjectMissingError extends Error {
  readonly missing = true;

  constructor(
    readonly key: string,
    options?: ErrorOptions,
  ) {
    super(`File not found in storage: ${key}`, options);
    this.name = 'StorageError';
  }
}
