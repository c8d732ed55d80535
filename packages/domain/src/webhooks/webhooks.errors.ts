import { DomainError } from '../shared/domain-error.js';
import { Messages } from '../shared/messages.js';

export class WebhookEndpointNotFoundError extends DomainError {
  readonly code = 'WEBHOOK_ENDPOINT_NOT_FOUND';
  constructor() {
    super(Messages.WEBHOOK_ENDPOINT_NOT_FOUND);
  }
}

/** An earlier replay of the endpoint is still being sent: some event it queued has not had its first attempt yet (409). */
export class WebhookReplayRunningError extends DomainError {
  readonly code = 'WEBHOOK_REPLAY_RUNNING';
  constructor() {
    super(Messages.WEBHOOK_REPLAY_RUNNING);
  }
}
