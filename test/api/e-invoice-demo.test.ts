import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { en16931Failures, XSD, xsdErrors } from '../support/xml-validation.js';

/**
 * Every invoice of the demo fixture (fixtures/demo.json: sales, purchase and
 * correcting invoices, rates 23/21/19 %, np, zw, six currencies) as UBL and
 * CII over HTTP, each document validated against the official XSDs; the
 * EN 16931 business rules run on a sample that covers every type, rate,
 * currency, country and client (EINVOICE_RULES=all runs them on every
 * document: about a second each).
 */
interface DemoInvoice {
  id: number;
  directory: string;
  type: string;
  currency: string;
  customer_country: string;
  items: Array<{ tax_rate: string; unit: string }>;
}
interface DemoFile {
  clients: Array<{ directory: string; api_key: string }>;
  invoices: DemoInvoice[];
}

const demo = JSON.parse(await readFile(path.resolve(import.meta.dirname, '../../fixtures/demo.json'), 'utf8')) as DemoFile;
const keys = new Map(demo.clients.map((client) => [client.directory, client.api_key]));

let api: TestApi;
let dir: string;
const written: Record<'ubl' | 'cii', Map<number, string>> = { ubl: new Map(), cii: new Map() };

/** The demo has no zero-rated item: one more invoice mixes 0 % (Z) with 23 %, `zw` and `np`. */
const zeroRated = {
  ...(demo.invoices.find((invoice) => invoice.id === 100002) as unknown as Record<string, unknown>),
  id: 199001,
  nr: 'FV/ZERO/0001',
  amount_net: 300,
  amount_tax: 23,
  amount_gross: 323,
  paid: 0,
  left_to_pay: 323,
  payment_date: null,
  status: 'issued',
  items: [
    { name: 'Export freight', quantity: 1, unit: 'pcs', unit_price_net: 100, tax_rate: '0', amount_net: 100, amount_tax: 0, amount_gross: 100 },
    { name: 'Loading', quantity: 1, unit: 'pcs', unit_price_net: 100, tax_rate: '23', amount_net: 100, amount_tax: 23, amount_gross: 123 },
    { name: 'Insurance', quantity: 1, unit: 'pcs', unit_price_net: 50, tax_rate: 'zw', amount_net: 50, amount_tax: 0, amount_gross: 50 },
    { name: 'Transit', quantity: 1, unit: 'km', unit_price_net: 50, tax_rate: 'np', amount_net: 50, amount_tax: 0, amount_gross: 50 },
  ],
} as unknown as DemoInvoice;
demo.invoices.push(zeroRated);

beforeAll(async () => {
  api = await startTestApi(
    {},
    { label: 'einvoice-demo', beforeStart: (_dataDir, { knex }) => loadFixtures(knex, demo, { hasher: new Sha256ApiKeyHasher() }).then(() => undefined) },
  );
  dir = path.join(api.dataDir, 'e-invoices');
  for (const format of ['ubl', 'cii'] as const) {
    await mkdir(path.join(dir, format), { recursive: true });
    // A few at a time: the API's own rate is not what this test measures.
    for (let start = 0; start < demo.invoices.length; start += 8) {
      await Promise.all(
        demo.invoices.slice(start, start + 8).map(async (invoice) => {
          const response = await fetch(`${api.base}/invoices/${invoice.id}/e-invoice?format=${format}`, {
            headers: { Authorization: `Bearer ${keys.get(invoice.directory)}`, 'X-Client-Directory': invoice.directory },
          });
          if (response.status !== 200) throw new Error(`invoice ${invoice.id} ${format}: ${response.status} ${await response.text()}`);
          const file = path.join(dir, format, `${invoice.id}.xml`);
          await writeFile(file, Buffer.from(await response.arrayBuffer()));
          written[format].set(invoice.id, file);
        }),
      );
    }
  }
}, 240_000);

afterAll(async () => {
  await api?.stop();
});

/** Invoices chosen until every type, rate, unit, currency, buyer country and client appears at least once. */
function coveringSample(): DemoInvoice[] {
  const features = (invoice: DemoInvoice) => [
    `type:${invoice.type}`,
    `currency:${invoice.currency}`,
    `country:${invoice.customer_country}`,
    `client:${invoice.directory}`,
    `items:${Math.min(invoice.items.length, 3)}`,
    ...invoice.items.map((item) => `rate:${item.tax_rate}`),
    ...invoice.items.map((item) => `unit:${item.unit}`),
    `${invoice.type}-rates:${[...new Set(invoice.items.map((item) => item.tax_rate))].sort().join('+')}`,
  ];
  const seen = new Set<string>();
  const sample: DemoInvoice[] = [];
  for (const invoice of demo.invoices) {
    if (features(invoice).some((feature) => !seen.has(feature))) {
      sample.push(invoice);
      for (const feature of features(invoice)) seen.add(feature);
    }
  }
  return sample;
}

describe('e-invoices of the demo fixture', () => {
  it('when every invoice is fetched as UBL, then each document is valid against the UBL 2.1 Invoice or CreditNote schema', async () => {
    expect(written.ubl.size).toBe(demo.invoices.length);
    const files = demo.invoices.map((invoice) => ({ invoice, file: written.ubl.get(invoice.id)! }));
    const creditNotes = files.filter(({ invoice }) => invoice.type === 'c').map(({ file }) => file);
    const invoices = files.filter(({ invoice }) => invoice.type !== 'c').map(({ file }) => file);
    for (const file of creditNotes)
      expect(await readFile(file, 'utf8')).toMatch(/<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"/);
    for (const file of invoices) expect(await readFile(file, 'utf8')).toMatch(/<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/);
    expect(creditNotes.length).toBeGreaterThan(0);
    expect(await xsdErrors(XSD.ublInvoice, invoices)).toEqual([]);
    expect(await xsdErrors(XSD.ublCreditNote, creditNotes)).toEqual([]);
  });

  it('when every invoice is fetched as CII, then each document is valid against the CII D16B schema, corrections with type code 381', async () => {
    expect(written.cii.size).toBe(demo.invoices.length);
    for (const invoice of demo.invoices) {
      const xml = await readFile(written.cii.get(invoice.id)!, 'utf8');
      expect(xml).toContain(`<ram:TypeCode>${invoice.type === 'c' ? '381' : '380'}</ram:TypeCode>`);
    }
    expect(await xsdErrors(XSD.cii, [...written.cii.values()])).toEqual([]);
  });

  it('when a schema check is given a broken document, then it reports it (the check can fail)', async () => {
    const first = written.ubl.get(demo.invoices[0]!.id)!;
    const broken = path.join(dir, 'broken.xml');
    await writeFile(broken, (await readFile(first, 'utf8')).replace('<cbc:IssueDate>', '<cbc:IssueDate>not-a-date'));
    expect((await xsdErrors(XSD.ublInvoice, [broken])).join('\n')).toMatch(/IssueDate/);
  });

  const everyDocument = process.env.EINVOICE_RULES === 'all';
  const sample = everyDocument ? demo.invoices : coveringSample();

  it.each(['ubl', 'cii'] as const)(
    'when the sample is checked as %s against the EN 16931 business rules, then no rule fails',
    async (syntax) => {
      expect(sample.length).toBeGreaterThan(5);
      const failures: string[] = [];
      for (const invoice of sample) {
        for (const failure of await en16931Failures(syntax, written[syntax].get(invoice.id)!)) failures.push(`${invoice.id}: ${failure}`);
      }
      expect(failures).toEqual([]);
    },
    everyDocument ? 1_800_000 : 600_000,
  );

  it('when the rules are given a document whose amount due is wrong, then BR-CO-16 fails (the check can fail)', async () => {
    const invoice = demo.invoices.find((candidate) => candidate.type === 's')!;
    const xml = await readFile(written.ubl.get(invoice.id)!, 'utf8');
    const broken = path.join(dir, 'wrong-total.xml');
    await writeFile(
      broken,
      xml.replace(/(<cbc:PayableAmount currencyID="[A-Z]+">)([\d.]+)/, (_all, tag: string, amount: string) => `${tag}${(Number(amount) + 1).toFixed(2)}`),
    );
    expect((await en16931Failures('ubl', broken)).join('\n')).toMatch(/BR-CO-16/);
  }, 600_000);
});
