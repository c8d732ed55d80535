import type { Invoice, InvoiceListResult, InvoiceOrder } from '@logi/domain';

/** The response fields of an invoice, listed one by one. */
export function toInvoiceDto(invoice: Invoice) {
  return {
    id: invoice.id,
    nr: invoice.nr,
    type: invoice.type,
    status: invoice.status,
    branch_id: invoice.branchId,
    issue_date: invoice.issueDate,
    service_date: invoice.serviceDate,
    payment_term: invoice.paymentTerm,
    payment_date: invoice.paymentDate,
    customer_name: invoice.customerName,
    customer_vat: invoice.customerVat,
    customer_country: invoice.customerCountry,
    currency: invoice.currency,
    amount_net: invoice.amountNet,
    amount_tax: invoice.amountTax,
    amount_gross: invoice.amountGross,
    paid: invoice.paid,
    left_to_pay: invoice.leftToPay,
    orders: invoice.orders.map(toInvoiceOrderDto),
    correct_of: invoice.correctOf ? { id: invoice.correctOf.id, nr: invoice.correctOf.nr } : null,
    added_time: invoice.addedTime,
  };
}

function toInvoiceOrderDto(order: InvoiceOrder) {
  return { type: order.type, nr: order.nr, cmr: order.cmr, tasks: order.tasks, files: order.files, contacts: order.contacts };
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
