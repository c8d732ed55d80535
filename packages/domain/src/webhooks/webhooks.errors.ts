import { DomainError } from '../shared/domain-error.js';
import { Messages } from '../shared/messages.js';

export class WebhookEndpointNotFoundError extends DomainError {
  readonly code = 'WEBHOOK_ENDPOINT_NOT_FOUND';
  constructor() {
    super(Messages.WEBHOOK_ENDPOINT_NOT_FOUND);
  }
}
