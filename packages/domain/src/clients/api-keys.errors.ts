import { DomainError } from '../shared/domain-error.js';
import { apiKeyScopeMissingMessage } from '../shared/messages.js';

/** The key is valid but lacks the scope the route needs (403, after 401, before 404 and 422). */
export class ApiKeyScopeMissingError extends DomainError {
  readonly code = 'API_KEY_SCOPE_MISSING';
  constructor(readonly scope: string) {
    super(apiKeyScopeMissingMessage(scope));
  }
}
