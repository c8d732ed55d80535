import type { ClockPort } from '../../ports/clock.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import type { Invoice } from '../invoice.js';
import { parseListInvoicesQuery } from './list-invoices.query.js';

export interface InvoiceListResult {
  invoices: Invoice[];
  pagination: { page: number; perPage: number; total: number; totalPages: number };
}

/** GET /invoices: validate the query, read one page, count the pages. */
export class ListInvoicesUseCase {
  constructor(private readonly deps: { invoices: InvoiceRepositoryPort; clock: ClockPort; timeZone: string }) {}

  async execute(input: { directory: string; query: Iterable<[string, string]> }): Promise<InvoiceListResult> {
    const criteria = parseListInvoicesQuery(input.query, {
      directory: input.directory,
      now: this.deps.clock.now(),
      timeZone: this.deps.timeZone,
    });
    const { invoices, total } = await this.deps.invoices.list(criteria);
    return {
      invoices,
      pagination: {
        page: criteria.page,
        perPage: criteria.perPage,
        total,
        totalPages: Math.ceil(total / criteria.perPage),
      },
    };
  }
}
