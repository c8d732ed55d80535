import type { InvoiceDetail } from '../invoice.js';
import type { EInvoice, EInvoiceParty, NationalEInvoiceFormat } from './e-invoice.js';
import { FA3_TAX_FIELDS, isPolishNip, nipOf } from '../ksef/ksef-rules.js';

/** The national currency of the sellers whose formats need one (KSeF: PLN; CIUS-RO: RON). */
const NATIONAL_CURRENCIES: Record<string, string> = { PL: 'PLN', RO: 'RON' };

/**
 * The document of a national format: the EN 16931 document plus what the national formats need beyond it (the
 * exchange rate, the KSeF numbers, the buyer reference as given). Pure: same input, same output.
 */
export function withNationalData(eInvoice: EInvoice, invoice: InvoiceDetail, timeZone: string): EInvoice {
  const day = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return {
    ...eInvoice,
    national: {
      givenBuyerReference: invoice.buyerReference ?? null,
      nationalCurrency: NATIONAL_CURRENCIES[eInvoice.seller.country] ?? null,
      exchangeRate: invoice.exchangeRate ?? null,
      ksefNumber: invoice.ksefNumber ?? null,
      corrected:
        invoice.type === 'c' && invoice.correctedInvoice
          ? { issueDate: day.format(new Date(invoice.correctedInvoice.issueDate * 1000)), ksefNumber: invoice.correctedInvoice.ksefNumber }
          : null,
      createdAt: new Date(invoice.addedTime * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    },
  };
}

/**
 * What an invoice lacks for a national format, in words that name the fixture field or the party (the contract's
 * 422 on `format`); empty when the format can be written. Each rule here is one the format's official artefacts
 * (schematron or XSD) or KSeF itself would refuse the document for.
 */
export function missingForFormat(format: NationalEInvoiceFormat, eInvoice: EInvoice): string[] {
  const national = eInvoice.national;
  if (!national) throw new Error('missingForFormat needs the document with its national data (withNationalData).');
  switch (format) {
    case 'xrechnung-ubl':
    case 'xrechnung-cii':
      return [
        ...(national.givenBuyerReference ? [] : ["buyer_reference (the buyer's Leitweg-ID, BT-10)"]),
        ...(eInvoice.seller.contact ? [] : [`the seller's contact person (company.contact: name, phone, e-mail)${sellerIsCounterparty(eInvoice)}`]),
        ...address(eInvoice.seller, 'seller'),
        ...address(eInvoice.buyer, 'buyer'),
        ...(eInvoice.seller.vatId ? [] : ["the seller's VAT number"]),
        ...(eInvoice.payment ? [] : ['a bank account to pay to (payment instructions, BR-DE-1)']),
        ...electronicAddress(eInvoice.seller, 'seller'),
        ...electronicAddress(eInvoice.buyer, 'buyer'),
      ];
    case 'peppol':
      return [
        ...electronicAddress(eInvoice.seller, 'seller'),
        ...electronicAddress(eInvoice.buyer, 'buyer'),
        ...(eInvoice.buyerReference ? [] : ['buyer_reference or an order number (PEPPOL-EN16931-R003)']),
        // Peppol's national rules for a Dutch supplier (NL-R-007) and a German supplier and customer (DE-R-001, DE-R-002).
        ...(eInvoice.payment === null && (eInvoice.seller.country === 'NL' || bothGerman(eInvoice))
          ? [
              `a bank account to pay to (${eInvoice.seller.country === 'NL' ? 'NL-R-007: a Dutch supplier gives a means of payment' : 'DE-R-001: payment instructions between German parties'}; a purchase invoice has none)`,
            ]
          : []),
        ...(bothGerman(eInvoice) && !eInvoice.seller.contact
          ? [`the seller's contact person (DE-R-002: between German parties)${sellerIsCounterparty(eInvoice)}`]
          : []),
      ];
    case 'cius-ro':
      if (eInvoice.seller.country !== 'RO' && eInvoice.buyer.country !== 'RO')
        return ['a Romanian seller or buyer (RO e-Factura is for invoices with a party in Romania)'];
      return [
        ...romanianCounty(eInvoice.seller, 'seller', 'company.county'),
        ...romanianCounty(eInvoice.buyer, 'buyer', 'customer_county'),
        ...(eInvoice.buyer.vatId ? [] : ["the buyer's VAT number (BR-RO-120)"]),
        ...(eInvoice.currency === 'RON' || (national.nationalCurrency === 'RON' && national.exchangeRate !== null)
          ? []
          : [`exchange_rate in RON for ${eInvoice.currency} (BR-RO-030: the VAT is accounted in RON; a Romanian seller's exchange_rate gives it)`]),
      ];
    case 'ksef':
      return ksefMissing(eInvoice);
  }
}

function ksefMissing(eInvoice: EInvoice): string[] {
  const national = eInvoice.national!;
  const seller = eInvoice.seller;
  const nip = seller.country === 'PL' && seller.vatId ? nipOf(seller.vatId) : null;
  if (nip === null) return [`a Polish seller with a NIP (the seller is ${seller.name}, ${seller.country}${seller.vatId ? `, ${seller.vatId}` : ''})`];
  const buyerNip = eInvoice.buyer.country === 'PL' && eInvoice.buyer.vatId ? nipOf(eInvoice.buyer.vatId) : null;
  return [
    ...(isPolishNip(nip) ? [] : [`a seller NIP whose check digit is right (${nip} fails KSeF's NIP checksum)`]),
    ...(buyerNip !== null && !isPolishNip(buyerNip) ? [`a buyer NIP whose check digit is right (${buyerNip} fails KSeF's NIP checksum)`] : []),
    ...(eInvoice.currency === 'PLN' || national.exchangeRate !== null ? [] : [`exchange_rate (PLN for one ${eInvoice.currency}: FA(3) states the VAT in PLN)`]),
    ...[...new Set(eInvoice.lines.map((line) => line.vatCategory))]
      .filter((category) => !(category in FA3_TAX_FIELDS))
      .map((category) => `a tax rate FA(3) has a field for (VAT category ${category} has none)`),
  ];
}

function bothGerman(eInvoice: EInvoice): boolean {
  return eInvoice.seller.country === 'DE' && eInvoice.buyer.country === 'DE';
}

function sellerIsCounterparty(eInvoice: EInvoice): string {
  return eInvoice.seller.contact === undefined && eInvoice.buyer.contact !== undefined
    ? ' (on a purchase invoice the seller is the customer, who has none)'
    : '';
}

function address(party: EInvoiceParty, role: 'seller' | 'buyer'): string[] {
  return party.city && party.postalCode ? [] : [`the ${role}'s post code and city (an address line such as "80-001 Gdańsk")`];
}

/** BT-34 / BT-49: the VAT number under its country's Peppol scheme is the only electronic address the data gives. */
function electronicAddress(party: EInvoiceParty, role: 'seller' | 'buyer'): string[] {
  return party.vatId ? [] : [`an electronic address for the ${role} (its VAT number, BT-${role === 'seller' ? 34 : 49})`];
}

function romanianCounty(party: EInvoiceParty, role: 'seller' | 'buyer', field: string): string[] {
  if (party.country !== 'RO') return [];
  if (!party.county) return [`${field}: the Romanian ${role}'s county (ISO 3166-2:RO, BR-RO-110)`];
  if (!/^RO-[A-Z]{1,2}$/.test(party.county)) return [`${field}: a Romanian county code such as "RO-CJ" for the ${role} (not ${party.county})`];
  if (party.county === 'RO-B' && !/^SECTOR[1-6]$/.test(party.city ?? '')) return [`the Bucharest ${role}'s sector as its city, SECTOR1 to SECTOR6 (BR-RO-100)`];
  return [];
}
