import type { CompanyDetails } from '../../clients/client.js';
import type { InvoiceDetail, InvoiceItem } from '../invoice.js';
import { clientIsSeller } from '../invoice-roles.js';
import type { DocumentLanguage, InvoiceDocument } from './invoice-document.js';
import { invoicePartyOf } from './invoice-party.js';
import { INVOICE_TRANSLATIONS } from './invoice-translations.js';
import { InvoiceValueFormatter } from './invoice-value.formatter.js';
import { unitName } from './unit-name.js';

/**
 * Turns an invoice into a printable document in one language: translated
 * labels, units, countries and VAT id names, and dates (in `timeZone`) and
 * amounts (in the invoice currency) written as that language's accountants
 * write them. Pure: same input, same output.
 */
export function buildInvoiceDocument(
  invoice: InvoiceDetail,
  seller: CompanyDetails,
  lang: DocumentLanguage,
  duplicate: boolean,
  timeZone: string,
): InvoiceDocument {
  const t = INVOICE_TRANSLATIONS[lang];
  const format = InvoiceValueFormatter.of(t, invoice.currency, timeZone);

  const company = invoicePartyOf(seller, t, format);
  const counterparty = invoicePartyOf(
    { name: invoice.customerName, address: invoice.customerAddress, vat: invoice.customerVat, country: invoice.customerCountry },
    t,
    format,
  );
  const isPurchase = !clientIsSeller(invoice.type);

  return {
    lang,
    locale: t.locale,
    title: t.titles[invoice.type],
    duplicateMark: duplicate ? t.duplicate : null,
    number: invoice.nr,
    labels: t.labels,
    seller: isPurchase ? counterparty : company,
    buyer: isPurchase ? company : counterparty,
    bank: isPurchase || seller.bankAccount.trim() === '' ? null : { account: seller.bankAccount, name: seller.bankName },
    dates: {
      issueDate: format.date(invoice.issueDate),
      serviceDate: format.date(invoice.serviceDate),
      paymentTerm: format.date(invoice.paymentTerm),
      paymentDate: invoice.paymentDate === null ? null : format.date(invoice.paymentDate),
    },
    items: invoice.items.map((item, index) => ({
      position: index + 1,
      name: item.name,
      quantity: format.quantity(item.quantity),
      unit: unitName(item.unit, item.unitCode, t.units),
      unitPriceNet: format.amount(item.unitPriceNet),
      taxRate: format.taxRate(item.taxRate),
      amountNet: format.amount(item.amountNet),
      amountTax: format.amount(item.amountTax),
      amountGross: format.amount(item.amountGross),
    })),
    amountsIn: t.amountsIn(invoice.currency),
    taxSummary: sumByTaxRate(invoice.items).map((row) => ({
      taxRate: format.taxRate(row.taxRate),
      net: format.amount(row.net),
      tax: format.amount(row.tax),
      gross: format.amount(row.gross),
    })),
    totals: {
      net: format.money(invoice.amountNet),
      tax: format.money(invoice.amountTax),
      gross: format.money(invoice.amountGross),
      paid: format.money(invoice.paid),
      leftToPay: format.money(invoice.leftToPay),
    },
    orders: invoice.orders.map((order) => ({ type: order.type, nr: order.nr, cmr: order.cmr })),
    correction: invoice.type === 'c' && invoice.correctOf ? { nr: invoice.correctOf.nr, text: t.correctionOf(invoice.correctOf.nr) } : null,
    // Set by loadInvoiceDocument, which can write the FA(3) the QR code verifies.
    ksef: null,
    currency: invoice.currency,
    status: t.statuses[invoice.status],
  };
}

/** Sums in whole cents so that 0.1 + 0.2 prints as 0.30; rates keep the order they first appear in. */
function sumByTaxRate(items: InvoiceItem[]): Array<{ taxRate: string; net: number; tax: number; gross: number }> {
  const groups = new Map<string, { taxRate: string; net: number; tax: number; gross: number }>();
  const cents = (value: number) => Math.round(value * 100);
  for (const item of items) {
    const key = item.taxRate.trim().toLowerCase();
    const group = groups.get(key) ?? { taxRate: item.taxRate, net: 0, tax: 0, gross: 0 };
    group.net += cents(item.amountNet);
    group.tax += cents(item.amountTax);
    group.gross += cents(item.amountGross);
    groups.set(key, group);
  }
  return [...groups.values()].map((g) => ({ taxRate: g.taxRate, net: g.net / 100, tax: g.tax / 100, gross: g.gross / 100 }));
}
