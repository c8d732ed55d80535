import type { CompanyDetails } from '../../clients/client.js';
import type { InvoiceDetail } from '../invoice.js';
import type { InvoiceDocument } from '../invoice-document/invoice-document.js';
import { clientIsSeller } from '../invoice-roles.js';
import type { EInvoice, EInvoiceLine, EInvoiceParty, EInvoiceVatBreakdown, VatCategory } from './e-invoice.js';
import { countryOf, exemptionReasonCodeOf, splitAddress, unitCodeOf, vatCategoryOf } from './e-invoice-defaults.js';

/**
 * The EN 16931 document of an invoice, from the same data and the same
 * printed document the PDF shows, so that the two cannot disagree: the
 * parties swap for a purchase invoice as on the PDF, the texts (correction
 * sentence, payment terms, reasons for untaxed items) are the PDF's, in its
 * language, and every amount is the PDF's.
 *
 * A correcting invoice (`c`) is a credit note (381) referencing the invoice
 * it corrects; its amounts change sign, so a correction that lowers the
 * price (negative on the PDF) is a credit note with positive amounts, as
 * EN 16931 expects. A negative unit price moves its sign to the quantity
 * (BR-27: prices are never negative). Pure: same input, same output.
 */
export function buildEInvoice(invoice: InvoiceDetail, company: CompanyDetails, document: InvoiceDocument, timeZone: string): EInvoice {
  const sign = invoice.type === 'c' ? -1 : 1;
  const day = dayFormat(timeZone);
  const client: EInvoiceParty = {
    name: company.name,
    vatId: nonEmpty(company.vat),
    country: countryOf(company.country, company.vat),
    ...splitAddress(document[clientIsSeller(invoice.type) ? 'seller' : 'buyer'].addressLines),
    // The optional fields of the national formats appear only when given, so a document without them is as before.
    ...(company.county ? { county: company.county } : {}),
    ...(company.contact ? { contact: company.contact } : {}),
  };
  const counterparty: EInvoiceParty = {
    name: invoice.customerName,
    vatId: nonEmpty(invoice.customerVat),
    country: countryOf(invoice.customerCountry, invoice.customerVat),
    ...splitAddress(document[clientIsSeller(invoice.type) ? 'buyer' : 'seller'].addressLines),
    ...(invoice.customerCounty ? { county: invoice.customerCounty } : {}),
  };

  const lines: Array<EInvoiceLine & { taxAmount: number; reason: string | null }> = invoice.items.map((item, index) => {
    const { category, rate } = vatCategoryOf(item.taxRate, item.taxCategory);
    const price = cents(item.unitPriceNet * sign);
    const quantity = item.quantity;
    return {
      id: String(document.items[index]?.position ?? index + 1),
      name: item.name,
      quantity: price < 0 ? -quantity : quantity,
      unitCode: unitCodeOf(item.unit, item.unitCode),
      netPrice: Math.abs(price),
      netAmount: cents(item.amountNet * sign),
      vatCategory: category,
      vatRate: rate,
      taxAmount: cents(item.amountTax * sign),
      // The printed tax rate of an untaxed item ("exempt", "not subject") says why, in the PDF's language.
      reason: NEEDS_REASON.has(category) ? (nonEmpty(item.taxExemptionReason ?? '') ?? document.items[index]?.taxRate ?? item.taxRate) : null,
    };
  });

  const vatBreakdown = breakdownOf(lines);
  const lineNet = sumCents(lines.map((line) => line.netAmount));
  const tax = sumCents(vatBreakdown.map((row) => row.taxAmount));
  const taxInclusive = cents(lineNet + tax);
  const paid = cents(invoice.paid * sign);
  const bank = document.bank;
  const labels = document.labels;

  return {
    lang: document.lang,
    number: invoice.nr,
    typeCode: invoice.type === 'c' ? '381' : '380',
    issueDate: day(invoice.issueDate),
    dueDate: day(invoice.paymentTerm),
    deliveryDate: day(invoice.serviceDate),
    currency: invoice.currency.toUpperCase(),
    notes: document.correction ? [document.correction.text] : [],
    buyerReference: invoice.buyerReference ?? joined(invoice.orders.map((order) => order.nr)),
    despatchReference: joined(invoice.orders.map((order) => order.cmr)),
    precedingInvoice: invoice.type === 'c' ? (invoice.correctOf?.nr ?? null) : null,
    seller: clientIsSeller(invoice.type) ? client : counterparty,
    buyer: clientIsSeller(invoice.type) ? counterparty : client,
    payment: bank ? { iban: bank.account.replace(/\s+/g, ''), accountName: company.name, bankName: bank.name } : null,
    paymentTerms: [
      `${labels.paymentTerm}: ${document.dates.paymentTerm}`,
      ...(bank ? [`${labels.bankAccount}: ${bank.account}`, `${labels.bankName}: ${bank.name}`] : []),
    ].join('; '),
    lines: lines.map(({ taxAmount: _tax, reason: _reason, ...line }) => line),
    vatBreakdown,
    totals: { lineNet, taxExclusive: lineNet, tax, taxInclusive, paid, payable: cents(taxInclusive - paid) },
  };
}

/** The categories EN 16931 wants a reason for (BR-E-10, BR-AE-10, BR-IC-10, BR-G-10, BR-O-10); S, Z, L and M must have none. */
const NEEDS_REASON: ReadonlySet<VatCategory> = new Set<VatCategory>(['E', 'AE', 'K', 'G', 'O']);

/**
 * One row per category and rate, with the sums of the lines' net and tax
 * amounts as the PDF's tax summary prints them (tax per item, summed: EN 16931
 * accepts a cent of difference to the rate applied to the sum).
 */
function breakdownOf(lines: Array<EInvoiceLine & { taxAmount: number; reason: string | null }>): EInvoiceVatBreakdown[] {
  const rows = new Map<string, EInvoiceVatBreakdown>();
  for (const line of lines) {
    const key = `${line.vatCategory}/${line.vatRate}`;
    const row = rows.get(key) ?? { category: line.vatCategory, rate: line.vatRate, taxableAmount: 0, taxAmount: 0, exemptionReason: null };
    row.taxableAmount = cents(row.taxableAmount + line.netAmount);
    row.taxAmount = cents(row.taxAmount + line.taxAmount);
    if (NEEDS_REASON.has(line.vatCategory) && row.exemptionReason === null) {
      row.exemptionReason = line.reason ?? exemptionReasonCodeOf(line.vatCategory);
    }
    rows.set(key, row);
  }
  return [...rows.values()];
}

function dayFormat(timeZone: string): (unixSeconds: number) => string {
  // en-CA writes ISO dates (YYYY-MM-DD).
  const format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return (unixSeconds) => format.format(new Date(unixSeconds * 1000));
}

/** Whole cents, without a negative zero. */
function cents(value: number): number {
  const rounded = Math.round(value * 100) / 100;
  return rounded === 0 ? 0 : rounded;
}

function sumCents(values: number[]): number {
  return values.reduce((sum, value) => Math.round(sum * 100 + value * 100) / 100, 0);
}

function joined(values: string[]): string | null {
  const kept = [...new Set(values.map((value) => value.trim()).filter((value) => value !== ''))];
  return kept.length > 0 ? kept.join(', ') : null;
}

function nonEmpty(value: string): string | null {
  return value.trim() === '' ? null : value.trim();
}
