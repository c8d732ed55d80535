import { DomainError } from '../shared/domain-error.js';
import { ServiceUnavailableError } from '../shared/common.errors.js';

/**
 * The `reason` label of a failed job: a small, fixed set of values (codes,
 * never messages), so a failure cannot mint a series per error text.
 */
export function failureReason(error: unknown): string {
  if (error instanceof ServiceUnavailableError) return 'unavailable';
  if (error instanceof DomainError) return error.code.toLowerCase();
  return 'error';
}
