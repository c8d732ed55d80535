import type { Invoice, InvoiceOrder } from '../invoices/invoice.js';

/**
 * An invoice exactly as an item of `GET /v1/invoices` shows it, field by
 * field. The list answers and the events' `object` both use it, so an event
 * can never show an invoice otherwise than the list does.
 */
export function toInvoiceListItem(invoice: Invoice) {
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
    orders: invoice.orders.map(toInvoiceOrderItem),
    correct_of: invoice.correctOf ? { id: invoice.correctOf.id, nr: invoice.correctOf.nr } : null,
    added_time: invoice.addedTime,
  };
}

export type InvoiceListItem = ReturnType<typeof toInvoiceListItem>;

function toInvoiceOrderItem(order: InvoiceOrder) {
  return { type: order.type, nr: order.nr, cmr: order.cmr, tasks: order.tasks, files: order.files, contacts: order.contacts };
}
