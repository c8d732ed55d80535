import type { Invoice as LibraryInvoice } from '@e-invoice-eu/core';
import type { EInvoice, EInvoiceParty } from '@logi/domain';

/** Peppol electronic address schemes (EAS) for VAT numbers, by country prefix. */
const VAT_ENDPOINT_SCHEMES: Record<string, string> = {
  AD: '9922',
  AL: '9923',
  AT: '9914',
  BA: '9924',
  BE: '9925',
  BG: '9926',
  CH: '9927',
  CY: '9928',
  CZ: '9929',
  DE: '9930',
  EE: '9931',
  ES: '9920',
  FR: '9957',
  GB: '9932',
  GR: '9933',
  EL: '9933',
  HR: '9934',
  HU: '9910',
  IE: '9935',
  IT: '0211',
  LI: '9936',
  LT: '9937',
  LU: '9938',
  LV: '9939',
  MC: '9940',
  ME: '9941',
  MK: '9942',
  MT: '9943',
  NL: '9944',
  PL: '9945',
  PT: '9946',
  RO: '9947',
  RS: '9948',
  SI: '9949',
  SK: '9950',
  SM: '9951',
  TR: '9952',
  VA: '9953',
};

type LibraryDocument = LibraryInvoice['ubl:Invoice'];
type Party = LibraryDocument['cac:AccountingSupplierParty']['cac:Party'];

/** What a format declares: its syntax, customization (BT-24), profile (BT-23), and the VAT accounting currency it wants. */
export interface LibraryProfile {
  syntax: 'ubl' | 'cii';
  customizationId: string;
  /** Absent: the library's default. */
  profileId?: string;
  /** BT-6 with the VAT total in it (BT-111), when the invoice is in another currency and its exchange rate is known. */
  taxCurrency?: string;
}

/**
 * The domain's e-invoice in the library's own format; nothing is decided here. `syntax` works around the library's
 * CII conversion reading BT-25 elsewhere than its UBL side (docs/contribute/decisions/0024-e-invoice-library.md).
 */
export function toLibraryInvoice(invoice: EInvoice, given: LibraryProfile | 'ubl' | 'cii'): LibraryInvoice {
  // A bare syntax is plain EN 16931 (customization `urn:cen.eu:en16931:2017`).
  const profile: LibraryProfile = typeof given === 'string' ? { syntax: given, customizationId: 'urn:cen.eu:en16931:2017' } : given;
  const { syntax } = profile;
  const currency = invoice.currency;
  const national = invoice.national;
  const taxCurrency =
    profile.taxCurrency && profile.taxCurrency !== currency && national?.nationalCurrency === profile.taxCurrency && national.exchangeRate !== null
      ? { code: profile.taxCurrency, rate: national.exchangeRate }
      : null;
  const amount = (value: number) => value.toFixed(2);
  const money = <K extends string>(key: K, value: number) =>
    ({ [key]: amount(value), [`${key}@currencyID`]: currency }) as Record<K | `${K}@currencyID`, string>;

  const document: Record<string, unknown> = {
    'cbc:CustomizationID': profile.customizationId,
    ...(profile.profileId ? { 'cbc:ProfileID': profile.profileId } : {}),
    'cbc:ID': invoice.number,
    'cbc:IssueDate': invoice.issueDate,
    'cbc:DueDate': invoice.dueDate,
    'cbc:InvoiceTypeCode': invoice.typeCode,
    ...(invoice.notes.length > 0 ? { 'cbc:Note': invoice.notes } : {}),
    'cbc:DocumentCurrencyCode': currency,
    ...(taxCurrency ? { 'cbc:TaxCurrencyCode': taxCurrency.code } : {}),
    ...(invoice.buyerReference ? { 'cbc:BuyerReference': invoice.buyerReference } : {}),
    ...(invoice.precedingInvoice
      ? {
          'cac:BillingReference': [
            syntax === 'ubl' ? { 'cac:InvoiceDocumentReference': { 'cbc:ID': invoice.precedingInvoice } } : { 'cbc:ID': invoice.precedingInvoice },
          ],
        }
      : {}),
    ...(invoice.despatchReference ? { 'cac:DespatchDocumentReference': { 'cbc:ID': invoice.despatchReference } } : {}),
    'cac:AccountingSupplierParty': { 'cac:Party': party(invoice.seller, 'seller') },
    'cac:AccountingCustomerParty': { 'cac:Party': party(invoice.buyer, 'buyer') },
    'cac:Delivery': { 'cbc:ActualDeliveryDate': invoice.deliveryDate },
    ...(invoice.payment
      ? {
          'cac:PaymentMeans': [
            {
              // 58: SEPA credit transfer when the account is an IBAN of a SEPA country, else 30: credit transfer.
              'cbc:PaymentMeansCode': /^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(invoice.payment.iban) ? '58' : '30',
              'cac:PayeeFinancialAccount': { 'cbc:ID': invoice.payment.iban, 'cbc:Name': invoice.payment.accountName },
            },
          ],
        }
      : {}),
    'cac:PaymentTerms': { 'cbc:Note': invoice.paymentTerms },
    'cac:TaxTotal': [
      {
        ...money('cbc:TaxAmount', invoice.totals.tax),
        'cac:TaxSubtotal': invoice.vatBreakdown.map((row) => ({
          ...money('cbc:TaxableAmount', row.taxableAmount),
          ...money('cbc:TaxAmount', row.taxAmount),
          'cac:TaxCategory': {
            'cbc:ID': row.category,
            ...percent(row.category, row.rate),
            ...(row.exemptionReason !== null ? exemption(row.category, row.exemptionReason) : {}),
            'cac:TaxScheme': { 'cbc:ID': 'VAT' },
          },
        })),
      },
      // BT-111: the VAT total in the accounting currency, at the given rate.
      ...(taxCurrency ? [{ 'cbc:TaxAmount': amount(invoice.totals.tax * taxCurrency.rate), 'cbc:TaxAmount@currencyID': taxCurrency.code }] : []),
    ],
    'cac:LegalMonetaryTotal': {
      ...money('cbc:LineExtensionAmount', invoice.totals.lineNet),
      ...money('cbc:TaxExclusiveAmount', invoice.totals.taxExclusive),
      ...money('cbc:TaxInclusiveAmount', invoice.totals.taxInclusive),
      ...(invoice.totals.paid !== 0 ? money('cbc:PrepaidAmount', invoice.totals.paid) : {}),
      ...money('cbc:PayableAmount', invoice.totals.payable),
    },
    'cac:InvoiceLine': invoice.lines.map((line) => ({
      'cbc:ID': line.id,
      'cbc:InvoicedQuantity': quantity(line.quantity),
      'cbc:InvoicedQuantity@unitCode': line.unitCode,
      ...money('cbc:LineExtensionAmount', line.netAmount),
      'cac:Item': {
        'cbc:Name': line.name,
        'cac:ClassifiedTaxCategory': { 'cbc:ID': line.vatCategory, ...percent(line.vatCategory, line.vatRate), 'cac:TaxScheme': { 'cbc:ID': 'VAT' } },
      },
      'cac:Price': money('cbc:PriceAmount', line.netPrice),
    })),
  };
  return { 'ubl:Invoice': document as unknown as LibraryDocument };
}

function party(source: EInvoiceParty, role: 'seller' | 'buyer'): Party {
  const taxScheme = { 'cbc:CompanyID': source.vatId, 'cac:TaxScheme': { 'cbc:ID': 'VAT' } };
  const scheme = source.vatId ? VAT_ENDPOINT_SCHEMES[source.vatId.slice(0, 2).toUpperCase()] : undefined;
  const result: Record<string, unknown> = {
    // The electronic address (BT-34/BT-49) Peppol asks for: the VAT number under its country's scheme.
    ...(source.vatId && scheme ? { 'cbc:EndpointID': source.vatId, 'cbc:EndpointID@schemeID': scheme } : {}),
    'cac:PostalAddress': {
      ...(source.street ? { 'cbc:StreetName': source.street } : {}),
      ...(source.additionalStreet ? { 'cbc:AdditionalStreetName': source.additionalStreet } : {}),
      ...(source.city ? { 'cbc:CityName': source.city } : {}),
      ...(source.postalCode ? { 'cbc:PostalZone': source.postalCode } : {}),
      ...(source.county ? { 'cbc:CountrySubentity': source.county } : {}),
      'cac:Country': { 'cbc:IdentificationCode': source.country },
    },
    // The seller may have two tax registrations (VAT and another), the buyer one.
    ...(source.vatId ? { 'cac:PartyTaxScheme': role === 'seller' ? [taxScheme] : taxScheme } : {}),
    'cac:PartyLegalEntity': { 'cbc:RegistrationName': source.name },
    ...(source.contact
      ? { 'cac:Contact': { 'cbc:Name': source.contact.name, 'cbc:Telephone': source.contact.phone, 'cbc:ElectronicMail': source.contact.email } }
      : {}),
  };
  return result as unknown as Party;
}

function exemption(category: string, reason: string): Record<string, string> {
  // A CEF VATEX code is a code, anything else is the reason in words.
  return /^VATEX-/.test(reason)
    ? { 'cbc:TaxExemptionReasonCode': reason }
    : { ...(category === 'AE' ? { 'cbc:TaxExemptionReasonCode': 'VATEX-EU-AE' } : {}), 'cbc:TaxExemptionReason': reason };
}

/** The rate; "outside the scope" (O) has none at all (BR-O-05, BR-O-10). */
function percent(category: string, rate: number): { 'cbc:Percent'?: string } {
  return category === 'O' ? {} : { 'cbc:Percent': String(Number(rate.toFixed(2))) };
}

function quantity(value: number): string {
  return String(Number(value.toFixed(4)));
}
