import { toInvoiceListItem, type Invoice, type InvoiceListResult } from '@logi/domain';

/** The response fields of an invoice, listed one by one (the same item the events carry). */
export function toInvoiceDto(invoice: Invoice) {
  return toInvoiceListItem(invoice);
}

export function toInvoiceListDto(result: InvoiceListResult) {
  return {
    invoices: result.invoices.map(toInvoiceDto),
    pagination: {
      page: result.pagination.page,
      per_page: result.pagination.perPage,
      total: result.pagination.total,
      total_pages: result.pagination.totalPages,
      // What a period meant at this moment, only when one applied (additive to the contract's fields).
      ...(result.pagination.appliedRange
        ? {
            date_field: result.pagination.appliedRange.dateField,
            date_from: result.pagination.appliedRange.dateFrom,
            date_to: result.pagination.appliedRange.dateTo,
            timezone: result.pagination.appliedRange.timeZone,
          }
        : {}),
    },
  };
}
