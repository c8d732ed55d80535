import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { KEYS } from '../support/test-fixture.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.stop();
});

describe('GET /invoices/{id}/e-invoice', () => {
  it('when no format is asked, then a UBL 2.1 invoice named like the PDF with .xml, with a strong ETag', async () => {
    const response = await api.call('/invoices/9001/e-invoice');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="FV_11_2026_0007.xml"');
    expect(response.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
    expect(response.headers.get('cache-control')).toBe('private, no-cache');
    const xml = await response.text();
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="utf-8"\?>\n<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/);
    expect(xml).toContain('<cbc:ID>FV/11/2026/0007</cbc:ID>');
    expect(xml).toContain('<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>');
    expect(xml).toContain('<cbc:CustomizationID>urn:cen.eu:en16931:2017</cbc:CustomizationID>');
    // The client's bank account, as on the PDF, and the order and CMR numbers as buyer and despatch references.
    expect(xml).toContain('<cbc:ID>PL61109010140000071219812874</cbc:ID>');
    expect(xml).toMatch(/<cbc:BuyerReference>BH\/2026\/0412<\/cbc:BuyerReference>/);
    expect(xml).toMatch(/<cac:DespatchDocumentReference>\s*<cbc:ID>CMR 9001<\/cbc:ID>/);
  });

  it('when format=cii, then a CII D16B document of the same invoice, under another ETag', async () => {
    const ubl = await api.call('/invoices/9001/e-invoice?format=ubl');
    const cii = await api.call('/invoices/9001/e-invoice?format=cii');
    expect(cii.status).toBe(200);
    const xml = await cii.text();
    expect(xml).toContain('<rsm:CrossIndustryInvoice');
    expect(xml).toContain('<ram:TypeCode>380</ram:TypeCode>');
    expect(xml).toContain('<ram:ID>FV/11/2026/0007</ram:ID>');
    expect(cii.headers.get('etag')).not.toBe(ubl.headers.get('etag'));
  });

  it('when the invoice is a correction, then a credit note that references the corrected invoice, with positive amounts', async () => {
    const xml = await (await api.call('/invoices/9005/e-invoice')).text();
    expect(xml).toContain('<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"');
    expect(xml).toContain('<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>');
    expect(xml).toMatch(/<cac:BillingReference>\s*<cac:InvoiceDocumentReference>\s*<cbc:ID>FV\/11\/2026\/0007<\/cbc:ID>/);
    expect(xml).toContain('<cbc:PayableAmount currencyID="EUR">100.00</cbc:PayableAmount>');
    const cii = await (await api.call('/invoices/9005/e-invoice?format=cii')).text();
    expect(cii).toContain('<ram:TypeCode>381</ram:TypeCode>');
    expect(cii).toMatch(/<ram:InvoiceReferencedDocument>\s*<ram:IssuerAssignedID>FV\/11\/2026\/0007<\/ram:IssuerAssignedID>/);
  });

  it('when the invoice is a purchase invoice, then the counterparty is the seller and the client the buyer, as on the PDF', async () => {
    const xml = await (await api.call('/invoices/9006/e-invoice')).text();
    const supplier = /<cac:AccountingSupplierParty>[\s\S]*?<\/cac:AccountingSupplierParty>/.exec(xml)![0];
    const customer = /<cac:AccountingCustomerParty>[\s\S]*?<\/cac:AccountingCustomerParty>/.exec(xml)![0];
    expect(supplier).toContain('Beta 100% Freight_Co');
    expect(supplier).toContain('<cbc:CompanyID>CZ12345678</cbc:CompanyID>');
    expect(customer).toContain('<cbc:CompanyID>PL5860000000</cbc:CompanyID>');
    expect(xml).not.toContain('<cac:PaymentMeans>');
  });

  it('when lang=de, then the texts inside are German and the ETag differs from the English one', async () => {
    const en = await api.call('/invoices/9005/e-invoice');
    const de = await api.call('/invoices/9005/e-invoice?lang=de');
    expect(de.status).toBe(200);
    expect(de.headers.get('etag')).not.toBe(en.headers.get('etag'));
    expect(await de.text()).not.toContain('Corrects invoice no.');
  });

  it('when If-None-Match names the current ETag, then 304 with no body; another ETag gets the document', async () => {
    const first = await api.call('/invoices/9001/e-invoice?format=cii');
    const etag = first.headers.get('etag')!;
    const again = await api.call('/invoices/9001/e-invoice?format=cii', { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(await again.text()).toBe('');
    const other = await api.call('/invoices/9001/e-invoice?format=ubl', { headers: { 'If-None-Match': etag } });
    expect(other.status).toBe(200);
    expect(await (await api.call('/invoices/9001/e-invoice?format=cii')).text()).toBe(await first.text());
  });

  it('when the invoice is missing, belongs to another client or the id is not an integer, then 404 even with an invalid query', async () => {
    for (const target of ['/invoices/424242/e-invoice', '/invoices/9101/e-invoice?format=xx', '/invoices/abc/e-invoice', '/invoices/0/e-invoice']) {
      const response = await api.call(target);
      expect(response.status).toBe(404);
      expect(await envelopeOf(response)).toEqual({ status: 404, message: 'Invoice not found', data: null });
    }
  });

  it.each(['?format=pdf', '?format=UBL', '?format=xrechnung', '?format=ubl&format=cii', '?format[]=ubl', '?lang=xx'])(
    'when the query is %s, then 422 The given data was invalid. naming the field',
    async (query) => {
      const response = await api.call(`/invoices/9001/e-invoice${query}`);
      expect(response.status).toBe(422);
      const body = await envelopeOf(response);
      expect(body.message).toBe('The given data was invalid.');
      expect(body.data).toBeNull();
      expect(Object.keys(body.errors ?? {})).toEqual([query.includes('lang') ? 'lang' : 'format']);
    },
  );

  it('when the credentials are missing, then 401', async () => {
    const response = await api.call('/invoices/9001/e-invoice', { as: null });
    expect(response.status).toBe(401);
  });

  // Last: it changes the baltic company's country.
  it('when the optional fixture fields are given (unit code, VAT category, exemption reason, company country), then they win over the defaults', async () => {
    const company = {
      name: 'Baltic Haulage Sp. z o.o.',
      address: 'ul. Portowa 4\n80-001 Gdańsk\nPoland',
      vat: 'PL5860000000',
      bank_account: 'PL61 1090 1014 0000 0712 1981 2874',
      bank_name: 'Santander Bank Polska',
    };
    const day = Date.parse('2026-11-20T00:00:00Z') / 1000;
    const item = { quantity: 2, unit_price_net: 50, amount_net: 100, amount_tax: 0, amount_gross: 100 };
    await loadFixtures(
      api.knex,
      {
        clients: [{ directory: 'baltic-haulage', api_key: KEYS.baltic, company: { ...company, country: 'lt' } }],
        invoices: [
          {
            id: 9901,
            directory: 'baltic-haulage',
            nr: 'FV/EI/1',
            type: 's',
            status: 'issued',
            branch_id: 1,
            issue_date: day,
            service_date: day,
            payment_term: day + 14 * 86400,
            payment_date: null,
            customer_name: 'Rheinfracht GmbH',
            customer_vat: 'DE811111111',
            customer_country: 'de',
            customer_address: 'Hafenstrasse 9\n47119 Duisburg',
            currency: 'EUR',
            amount_net: 200,
            amount_tax: 0,
            amount_gross: 200,
            paid: 0,
            left_to_pay: 200,
            correct_of: null,
            added_time: day,
            orders: [],
            items: [
              { ...item, name: 'Transport', unit: 'km', unit_code: 'KMT', tax_rate: 'np', tax_category: 'K', tax_exemption_reason: 'Intra-community supply' },
              { ...item, name: 'Handling', unit: 'pcs', tax_rate: 'zw' },
            ],
          },
        ],
      },
      { hasher: new Sha256ApiKeyHasher() },
    );
    const xml = await (await api.call('/invoices/9901/e-invoice')).text();
    expect(xml).toContain('<cbc:InvoicedQuantity unitCode="KMT">2</cbc:InvoicedQuantity>');
    expect(xml).toContain('<cbc:InvoicedQuantity unitCode="H87">2</cbc:InvoicedQuantity>');
    expect(xml).toMatch(/<cbc:ID>K<\/cbc:ID>\s*<cbc:Percent>0<\/cbc:Percent>\s*<cbc:TaxExemptionReason>Intra-community supply<\/cbc:TaxExemptionReason>/);
    expect(xml).toMatch(/<cbc:ID>E<\/cbc:ID>\s*<cbc:Percent>0<\/cbc:Percent>\s*<cbc:TaxExemptionReason>exempt<\/cbc:TaxExemptionReason>/);
    const supplier = /<cac:AccountingSupplierParty>[\s\S]*?<\/cac:AccountingSupplierParty>/.exec(xml)![0];
    expect(supplier).toContain('<cbc:IdentificationCode>LT</cbc:IdentificationCode>');
    expect(xml).not.toContain('<cbc:BuyerReference>');
  });
});
