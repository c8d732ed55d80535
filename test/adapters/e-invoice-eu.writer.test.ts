import { InvoiceService } from '@e-invoice-eu/core';
import { describe, expect, it } from 'vitest';
import { EInvoiceEuWriter, toLibraryInvoice } from '@logi/adapters';
import type { EInvoice } from '@logi/domain';

const invoice: EInvoice = {
  lang: 'en',
  number: 'FV/1',
  typeCode: '380',
  issueDate: '2026-11-18',
  dueDate: '2026-12-02',
  deliveryDate: '2026-11-17',
  currency: 'EUR',
  notes: [],
  buyerReference: 'BH/1, BH/2',
  despatchReference: 'CMR 1, CMR 2',
  precedingInvoice: null,
  seller: { name: 'Seller', vatId: 'PL5860000000', country: 'PL', street: 'ul. Portowa 4', additionalStreet: null, city: 'Gdańsk', postalCode: '80-001' },
  buyer: { name: 'Buyer & Co <GmbH>', vatId: 'DE811111111', country: 'DE', street: null, additionalStreet: null, city: 'Duisburg', postalCode: null },
  payment: { iban: 'PL61109010140000071219812874', accountName: 'Seller', bankName: 'Bank' },
  paymentTerms: 'Due date: 02/12/2026',
  lines: [
    { id: '1', name: 'Freight', quantity: 1, unitCode: 'H87', netPrice: 100, netAmount: 100, vatCategory: 'S', vatRate: 23 },
    { id: '2', name: 'Insurance', quantity: 2.5, unitCode: 'HUR', netPrice: 10, netAmount: 25, vatCategory: 'E', vatRate: 0 },
  ],
  vatBreakdown: [
    { category: 'S', rate: 23, taxableAmount: 100, taxAmount: 23, exemptionReason: null },
    { category: 'E', rate: 0, taxableAmount: 25, taxAmount: 0, exemptionReason: 'exempt' },
  ],
  totals: { lineNet: 125, taxExclusive: 125, tax: 23, taxInclusive: 148, paid: 48, payable: 100 },
};

describe('EInvoiceEuWriter', () => {
  const writer = new EInvoiceEuWriter();

  it('when it writes UBL and CII, then the bytes equal what the library writes after validating the data against its schema', async () => {
    const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
    for (const [format, name] of [['ubl', 'UBL'], ['cii', 'CII']] as const) {
      const validated = await new InvoiceService(quiet).generate(toLibraryInvoice(invoice, 'ubl'), { format: name, lang: 'en', noWarnings: true });
      expect(await writer.xml(invoice, format)).toBe(validated);
    }
  });

  it('when a text holds XML characters, then they are escaped', async () => {
    expect(await writer.xml(invoice, 'ubl')).toContain('Buyer &amp; Co &lt;GmbH&gt;');
  });

  it('when the same document is written twice, then the same text', async () => {
    expect(await writer.xml({ ...invoice }, 'cii')).toBe(await writer.xml(invoice, 'cii'));
  });
});
