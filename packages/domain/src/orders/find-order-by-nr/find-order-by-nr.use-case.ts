import { ValidationError } from '../../shared/common.errors.js';
import { Messages } from '../../shared/messages.js';
import { readSingleValues } from '../../shared/query-params.js';
import type { OrderRepositoryPort } from '../../ports/order-repository.port.js';
import type { Order } from '../order.js';
import { OrderNrNotFoundError } from '../orders.errors.js';

/** GET /orders/by-nr: the first order whose number contains the trimmed `nr`. */
export class FindOrderByNrUseCase {
  constructor(private readonly deps: { orders: OrderRepositoryPort }) {}

  async execute(input: { directory: string; query: Iterable<[string, string]> }): Promise<Order> {
    const nr = parseOrderNrQuery(input.query);
    const order = await this.deps.orders.findFirstByNr(input.directory, nr);
    if (!order) throw new OrderNrNotFoundError(nr);
    return order;
  }
}

/** The trimmed `nr` of the query, or a 422 ValidationError. */
export function parseOrderNrQuery(query: Iterable<[string, string]>): string {
  const { values, errors } = readSingleValues(query, ['nr']);
  if (errors.nr) throw new ValidationError(errors.nr[0]!, errors);
  const nr = values.nr?.trim() ?? '';
  if (nr === '') throw new ValidationError(Messages.NR_REQUIRED, { nr: [Messages.NR_REQUIRED] });
  // Characters are code points, as the document's maxLength and zod count them: 255 emoji are 510 UTF-16 units.
  if ([...nr].length > 255) {
    const message = 'The nr field must not be greater than 255 characters.';
    throw new ValidationError(message, { nr: [message] });
  }
  return nr;
}
