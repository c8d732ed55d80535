import { DomainError } from '../shared/domain-error.js';

/**
 * A job whose payload the API could not have sent (a forged or damaged job): it fails at once, never retried, and
 * reaches neither storage nor the database. `issues` name the fields and rules, never the values.
 */
export class InvalidJobPayloadError extends DomainError {
  readonly code = 'INVALID_JOB_PAYLOAD';
  constructor(
    readonly job: string,
    readonly issues: readonly string[],
  ) {
    super(`The ${job} job's payload is not valid.`);
  }
}
