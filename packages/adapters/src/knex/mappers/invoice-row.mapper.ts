import {
  INVOICE_STATUSES,
  INVOICE_TYPES,
  type Invoice,
  type InvoiceDetail,
  type InvoiceItem,
  type InvoiceOrder,
  type InvoiceStatus,
  type InvoiceType,
} from '@logi/domain';
import { toJsonArray, toNullableNumber, toNumber, toText } from './sql-values.js';

/** Columns of `invoices` read for the list; the list query selects them as `i.<column>`. */
export const INVOICE_COLUMNS = [
  'id',
  'directory',
  'nr',
  'type',
  'status',
  'branch_id',
  'issue_date',
  'service_date',
  'payment_term',
  'payment_date',
  'customer_name',
  'customer_vat',
  'customer_country',
  'currency',
  'amount_net',
  'amount_tax',
  'amount_gross',
  'paid',
  'left_to_pay',
  'added_time',
] as const;

/** An invoice row joined with the corrected invoice (`correct_of_ref_id`, `correct_of_nr`; null when none). */
export type InvoiceRow = Record<(typeof INVOICE_COLUMNS)[number] | 'correct_of_ref_id' | 'correct_of_nr', unknown>;

/** The national e-invoice columns, read for one invoice's detail only. */
export const NATIONAL_COLUMNS = ['customer_county', 'buyer_reference', 'exchange_rate', 'ksef_number'] as const;
/** Those columns, with the corrected invoice's issue date and KSeF number (`correct_of_issue_date`, `correct_of_ksef_number`). */
export type NationalRow = Record<(typeof NATIONAL_COLUMNS)[number] | 'correct_of_issue_date' | 'correct_of_ksef_number', unknown>;

/** The optional national fields of InvoiceDetail: left out when the row holds none, so an invoice without them is as before. */
export function toNationalFields(
  row: NationalRow,
): Pick<InvoiceDetail, 'customerCounty' | 'buyerReference' | 'exchangeRate' | 'ksefNumber' | 'correctedInvoice'> {
  return {
    ...(row.customer_county == null ? {} : { customerCounty: toText(row.customer_county, 'invoices.customer_county') }),
    ...(row.buyer_reference == null ? {} : { buyerReference: toText(row.buyer_reference, 'invoices.buyer_reference') }),
    ...(row.exchange_rate == null ? {} : { exchangeRate: toNumber(row.exchange_rate, 'invoices.exchange_rate') }),
    ...(row.ksef_number == null ? {} : { ksefNumber: toText(row.ksef_number, 'invoices.ksef_number') }),
    ...(row.correct_of_issue_date == null
      ? {}
      : {
          correctedInvoice: {
            issueDate: toNumber(row.correct_of_issue_date, 'invoices.issue_date'),
            ksefNumber: row.correct_of_ksef_number == null ? null : toText(row.correct_of_ksef_number, 'invoices.ksef_number'),
          },
        }),
  };
}

export const INVOICE_ORDER_COLUMNS = ['invoice_id', 'position', 'type', 'nr', 'cmr', 'tasks', 'files', 'contacts'] as const;
export type InvoiceOrderRow = Record<(typeof INVOICE_ORDER_COLUMNS)[number], unknown>;

export const INVOICE_ITEM_COLUMNS = [
  'invoice_id',
  'position',
  'name',
  'quantity',
  'unit',
  'unit_price_net',
  'tax_rate',
  'amount_net',
  'amount_tax',
  'amount_gross',
  'unit_code',
  'tax_category',
  'tax_exemption_reason',
] as const;
export type InvoiceItemRow = Record<(typeof INVOICE_ITEM_COLUMNS)[number], unknown>;

function oneOf<T extends string>(allowed: readonly T[], value: unknown, column: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new Error(`Unexpected value in column ${column}`);
}

export function toInvoice(row: InvoiceRow, orders: InvoiceOrder[]): Invoice {
  const correctOfId = toNullableNumber(row.correct_of_ref_id, 'invoices.correct_of_id');
  return {
    id: toNumber(row.id, 'invoices.id'),
    directory: toText(row.directory, 'invoices.directory'),
    nr: toText(row.nr, 'invoices.nr'),
    type: oneOf<InvoiceType>(INVOICE_TYPES, row.type, 'invoices.type'),
    status: oneOf<InvoiceStatus>(INVOICE_STATUSES, row.status, 'invoices.status'),
    branchId: toNumber(row.branch_id, 'invoices.branch_id'),
    issueDate: toNumber(row.issue_date, 'invoices.issue_date'),
    serviceDate: toNumber(row.service_date, 'invoices.service_date'),
    paymentTerm: toNumber(row.payment_term, 'invoices.payment_term'),
    paymentDate: toNullableNumber(row.payment_date, 'invoices.payment_date'),
    customerName: toText(row.customer_name, 'invoices.customer_name'),
    customerVat: toText(row.customer_vat, 'invoices.customer_vat'),
    customerCountry: toText(row.customer_country, 'invoices.customer_country'),
    currency: toText(row.currency, 'invoices.currency'),
    amountNet: toNumber(row.amount_net, 'invoices.amount_net'),
    amountTax: toNumber(row.amount_tax, 'invoices.amount_tax'),
    amountGross: toNumber(row.amount_gross, 'invoices.amount_gross'),
    paid: toNumber(row.paid, 'invoices.paid'),
    leftToPay: toNumber(row.left_to_pay, 'invoices.left_to_pay'),
    correctOf: correctOfId === null ? null : { id: correctOfId, nr: toText(row.correct_of_nr, 'invoices.nr') },
    addedTime: toNumber(row.added_time, 'invoices.added_time'),
    orders,
  };
}

export function toInvoiceOrder(row: InvoiceOrderRow): InvoiceOrder {
  return {
    type: toText(row.type, 'invoice_orders.type'),
    nr: toText(row.nr, 'invoice_orders.nr'),
    cmr: toText(row.cmr, 'invoice_orders.cmr'),
    tasks: toJsonArray(row.tasks, 'invoice_orders.tasks'),
    files: toJsonArray(row.files, 'invoice_orders.files'),
    contacts: toJsonArray(row.contacts, 'invoice_orders.contacts'),
  };
}

export function toInvoiceItem(row: InvoiceItemRow): InvoiceItem {
  return {
    name: toText(row.name, 'invoice_items.name'),
    quantity: toNumber(row.quantity, 'invoice_items.quantity'),
    unit: toText(row.unit, 'invoice_items.unit'),
    unitPriceNet: toNumber(row.unit_price_net, 'invoice_items.unit_price_net'),
    taxRate: toText(row.tax_rate, 'invoice_items.tax_rate'),
    amountNet: toNumber(row.amount_net, 'invoice_items.amount_net'),
    amountTax: toNumber(row.amount_tax, 'invoice_items.amount_tax'),
    amountGross: toNumber(row.amount_gross, 'invoice_items.amount_gross'),
    // The e-invoice fields only when set: an item without them reads as it always did.
    ...(row.unit_code == null ? {} : { unitCode: toText(row.unit_code, 'invoice_items.unit_code') }),
    ...(row.tax_category == null ? {} : { taxCategory: toText(row.tax_category, 'invoice_items.tax_category') }),
    ...(row.tax_exemption_reason == null ? {} : { taxExemptionReason: toText(row.tax_exemption_reason, 'invoice_items.tax_exemption_reason') }),
  };
}
