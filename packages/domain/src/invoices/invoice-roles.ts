import type { InvoiceType } from './invoice.js';

/**
 * Who sold to whom. Sales and correcting invoices are issued by the client
 * (its company is the seller, the customer the buyer, paid to the client's
 * account); a purchase invoice was issued to the client by its counterparty:
 * the roles swap, and the client's own bank account is not where the money
 * goes. The PDF and the e-invoice both follow this one rule.
 */
export function clientIsSeller(type: InvoiceType): boolean {
  return type !== 'p';
}
