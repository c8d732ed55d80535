import { DomainError } from '../shared/domain-error.js';
import { Messages, orderNrNotFoundMessage } from '../shared/messages.js';

export class OrderNotFoundError extends DomainError {
  readonly code = 'ORDER_NOT_FOUND';
  constructor() {
    super(Messages.ORDER_NOT_FOUND);
  }
}

export class OrderNrNotFoundError extends DomainError {
  readonly code = 'ORDER_NR_NOT_FOUND';
  constructor(nr: string) {
    super(orderNrNotFoundMessage(nr));
  }
}
