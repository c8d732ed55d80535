import type { ClockPort } from '../../ports/clock.port.js';
import type { InvoiceRepositoryPort } from '../../ports/invoice-repository.port.js';
import type { Invoice } from '../invoice.js';
import type { InvoiceDateField } from '../invoice-criteria.js';
import { parseListInvoicesQuery } from './list-invoices.query.js';
import { rangeDays, type CalendarDate } from './periods.js';

/** The date range a period filter applied: inclusive days in `timeZone` (null for an open end of a custom range). */
export interface AppliedDateRange {
  dateField: InvoiceDateField;
  dateFrom: CalendarDate | null;
  dateTo: CalendarDate | null;
  timeZone: string;
}

export interface InvoiceListResult {
  invoices: Invoice[];
  pagination: { page: number; perPage: number; total: number; totalPages: number; appliedRange: AppliedDateRange | null };
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
        appliedRange: criteria.dateFilter
          ? {
              dateField: criteria.dateFilter.field,
              ...renameDays(rangeDays(criteria.dateFilter.range, this.deps.timeZone)),
              timeZone: this.deps.timeZone,
            }
          : null,
      },
    };
  }
}

function renameDays(days: { from: CalendarDate | null; to: CalendarDate | null }): { dateFrom: CalendarDate | null; dateTo: CalendarDate | null } {
  return { dateFrom: days.from, dateTo: days.to };
}
