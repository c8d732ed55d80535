import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { KSEF_CATALOG, schematronFailures, XSD, xsdErrors, type RuleSet } from '../support/xml-validation.js';

/**
 * Every invoice of the demo fixture (fixtures/demo.json) in each national format over HTTP: each answer is the
 * document or 422 on `format` naming what is missing, as the demo's data predicts; every document passes its
 * official XSD (UBL 2.1, CII D16B, KSeF FA(3) with xmllint --nonet and the catalog) and, on a sample that covers
 * every type, currency, buyer country, client and rate, the EN 16931 rules and then its national rules (XRechnung
 * 3.0.2, Peppol BIS 3.0.21, CIUS-RO 1.0.9) with no fatal or error assertion (EINVOICE_RULES=all: every document).
 */
interface DemoInvoice {
  id: number;
  directory: string;
  nr: string;
  type: string;
  currency: string;
  customer_country: string;
  issue_date: number;
  correct_of: number | null;
  buyer_reference?: string;
  exchange_rate?: number;
  ksef_number?: string;
  items: Array<{ tax_rate: string; amount_tax: number }>;
}
interface DemoFile {
  clients: Array<{ directory: string; api_key: string; company: { vat: string } }>;
  invoices: DemoInvoice[];
}

const FORMATS = ['xrechnung-ubl', 'xrechnung-cii', 'peppol', 'cius-ro', 'ksef'] as const;
type Format = (typeof FORMATS)[number];

const demo = JSON.parse(await readFile(path.resolve(import.meta.dirname, '../../fixtures/demo.json'), 'utf8')) as DemoFile;
const keys = new Map(demo.clients.map((client) => [client.directory, client.api_key]));
const sellerCountry = (invoice: DemoInvoice) =>
  invoice.type === 'p'
    ? invoice.customer_country
    : demo.clients
        .find((client) => client.directory === invoice.directory)!
        .company.vat.slice(0, 2)
        .toLowerCase();

/** Which demo invoices each format applies to, from the fixture's data alone (docs/integrate/e-invoices.md#national-e-invoices). */
const APPLIES: Record<Format, (invoice: DemoInvoice) => boolean> = {
  // A Leitweg-ID, and the seller's contact: the client's, so not on a purchase invoice.
  'xrechnung-ubl': (invoice) => invoice.buyer_reference !== undefined && invoice.type !== 'p',
  'xrechnung-cii': (invoice) => invoice.buyer_reference !== undefined && invoice.type !== 'p',
  // Every demo party has a VAT number (the electronic address) and every invoice an order number; Peppol's national
  // rules want payment instructions from a Dutch supplier and between German parties, which a purchase invoice lacks.
  peppol: (invoice) =>
    !(invoice.type === 'p' && (invoice.customer_country === 'nl' || (invoice.customer_country === 'de' && invoice.directory === 'alpine-logistics'))),
  // A Romanian party with its county; VAT in RON, so another currency needs a Romanian seller's rate.
  'cius-ro': (invoice) =>
    (invoice.customer_country === 'ro' || sellerCountry(invoice) === 'ro') &&
    (invoice.currency === 'RON' || (sellerCountry(invoice) === 'ro' && invoice.exchange_rate !== undefined)),
  ksef: (invoice) => sellerCountry(invoice) === 'pl',
};

let api: TestApi;
let dir: string;
const documents: Record<Format, Map<number, string>> = Object.fromEntries(FORMATS.map((format) => [format, new Map()])) as never;
const refusals: Record<Format, Map<number, string[]>> = Object.fromEntries(FORMATS.map((format) => [format, new Map()])) as never;
const others: string[] = [];

beforeAll(async () => {
  api = await startTestApi(
    {},
    { label: 'einvoice-national', beforeStart: (_dataDir, { knex }) => loadFixtures(knex, demo, { hasher: new Sha256ApiKeyHasher() }).then(() => undefined) },
  );
  dir = path.join(api.dataDir, 'national');
  for (const format of FORMATS) {
    await mkdir(path.join(dir, format), { recursive: true });
    for (let start = 0; start < demo.invoices.length; start += 8) {
      await Promise.all(
        demo.invoices.slice(start, start + 8).map(async (invoice) => {
          const response = await fetch(`${api.base}/invoices/${invoice.id}/e-invoice?format=${format}`, {
            headers: { Authorization: `Bearer ${keys.get(invoice.directory)}`, 'X-Client-Directory': invoice.directory },
          });
          const body = Buffer.from(await response.arrayBuffer());
          if (response.status === 200) {
            const file = path.join(dir, format, `${invoice.id}.xml`);
            await writeFile(file, body);
            documents[format].set(invoice.id, file);
          } else if (response.status === 422) {
            refusals[format].set(invoice.id, (JSON.parse(body.toString('utf8')) as { errors: { format?: string[] } }).errors.format ?? []);
          } else {
            others.push(`${format} ${invoice.id}: ${response.status} ${body.toString('utf8').slice(0, 300)}`);
          }
        }),
      );
    }
  }
}, 300_000);

afterAll(async () => {
  await api?.stop();
});

/** Invoices chosen until every type, currency, buyer country, client, rate and seller country appears at least once. */
function coveringSample(invoices: DemoInvoice[]): DemoInvoice[] {
  const features = (invoice: DemoInvoice) => [
    `type:${invoice.type}`,
    `currency:${invoice.currency}`,
    `country:${invoice.customer_country}`,
    `client:${invoice.directory}`,
    `seller:${sellerCountry(invoice)}`,
    ...invoice.items.map((item) => `rate:${item.tax_rate}`),
    `${invoice.type}-rates:${[...new Set(invoice.items.map((item) => item.tax_rate))].sort().join('+')}`,
  ];
  const seen = new Set<string>();
  return invoices.filter((invoice) => {
    const fresh = features(invoice).some((feature) => !seen.has(feature));
    for (const feature of features(invoice)) seen.add(feature);
    return fresh;
  });
}

const everyDocument = process.env.EINVOICE_RULES === 'all';
const RULES: Record<Exclude<Format, 'ksef'>, [RuleSet, RuleSet]> = {
  'xrechnung-ubl': ['ubl', 'xrechnung-ubl'],
  'xrechnung-cii': ['cii', 'xrechnung-cii'],
  peppol: ['ubl', 'peppol'],
  'cius-ro': ['ubl', 'cius-ro'],
};

/** Fatal and error assertions only: warnings are advice the formats allow. */
async function blockingFailures(rules: RuleSet, file: string): Promise<string[]> {
  return (await schematronFailures(rules, file)).filter((failure) => / (fatal|error) /.test(failure));
}

describe('national e-invoices of the demo fixture', () => {
  it('when every invoice is asked in every national format, then each answer is the document or 422 on format, as the data predicts', () => {
    expect(others).toEqual([]);
    for (const format of FORMATS) {
      const expected = demo.invoices.filter(APPLIES[format]).map((invoice) => invoice.id);
      expect(expected.length, format).toBeGreaterThan(5);
      expect([...documents[format].keys()].sort(), format).toEqual(expected.sort());
      for (const [id, messages] of refusals[format]) {
        expect(messages.length, `${format} ${id}`).toBeGreaterThan(0);
        for (const message of messages) expect(message, `${format} ${id}`).toMatch(new RegExp(`^format=${format} needs .+\\.$`));
      }
    }
    // What each refusal names, for the invoices the data says lack it.
    const purchase = demo.invoices.find((invoice) => invoice.type === 'p' && invoice.buyer_reference !== undefined);
    expect(refusals['xrechnung-ubl'].get(purchase!.id)!.join(' ')).toMatch(/seller's contact person/);
    const noLeitweg = demo.invoices.find((invoice) => invoice.buyer_reference === undefined)!;
    expect(refusals['xrechnung-cii'].get(noLeitweg.id)!.join(' ')).toMatch(/buyer_reference \(the buyer's Leitweg-ID, BT-10\)/);
    const german = demo.invoices.find((invoice) => sellerCountry(invoice) === 'de')!;
    expect(refusals.ksef.get(german.id)).toEqual([expect.stringMatching(/^format=ksef needs a Polish seller with a NIP/)]);
    const notRomanian = demo.invoices.find((invoice) => invoice.customer_country === 'de')!;
    expect(refusals['cius-ro'].get(notRomanian.id)).toEqual([
      'format=cius-ro needs a Romanian seller or buyer (RO e-Factura is for invoices with a party in Romania).',
    ]);
    const romanianInEuro = demo.invoices.find((invoice) => invoice.customer_country === 'ro' && invoice.currency !== 'RON' && sellerCountry(invoice) !== 'ro')!;
    expect(refusals['cius-ro'].get(romanianInEuro.id)!.join(' ')).toMatch(/exchange_rate in RON/);
  });

  it('when the UBL documents are checked against the UBL 2.1 schemas, then each is a valid Invoice or CreditNote', async () => {
    for (const format of ['xrechnung-ubl', 'peppol', 'cius-ro'] as const) {
      const creditNotes: string[] = [];
      const invoices: string[] = [];
      for (const [id, file] of documents[format]) (demo.invoices.find((invoice) => invoice.id === id)!.type === 'c' ? creditNotes : invoices).push(file);
      expect(invoices.length, format).toBeGreaterThan(0);
      expect(await xsdErrors(XSD.ublInvoice, invoices), format).toEqual([]);
      expect(await xsdErrors(XSD.ublCreditNote, creditNotes), format).toEqual([]);
    }
  });

  it('when the XRechnung CII documents are checked against the CII D16B schema, then each is valid', async () => {
    expect(await xsdErrors(XSD.cii, [...documents['xrechnung-cii'].values()])).toEqual([]);
  });

  it('when the KSeF documents are checked against the FA(3) schema offline, then each is valid, UTF-8 without a BOM and under 1 MB', async () => {
    const files = [...documents.ksef.values()];
    expect(await xsdErrors(XSD.ksefFa3, files, KSEF_CATALOG)).toEqual([]);
    for (const file of files) {
      const bytes = await readFile(file);
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('<?xml');
      expect(bytes.length).toBeLessThan(1_000_000);
    }
  });

  it('when a KSeF document is in another currency, then its VAT is also given in PLN at the exchange rate, and a correction names the KSeF number it corrects', async () => {
    const foreign = demo.invoices.find(
      (invoice) => documents.ksef.has(invoice.id) && invoice.currency !== 'PLN' && invoice.items.some((item) => item.tax_rate === '23'),
    )!;
    const xml = await readFile(documents.ksef.get(foreign.id)!, 'utf8');
    const tax = Number(/<P_14_1>([-\d.]+)<\/P_14_1>/.exec(xml)![1]);
    expect(Number(/<P_14_1W>([-\d.]+)<\/P_14_1W>/.exec(xml)![1])).toBeCloseTo(tax * foreign.exchange_rate!, 2);
    expect(xml).toContain(`<KodWaluty>${foreign.currency}</KodWaluty>`);
    expect(xml).toContain(`<KursWaluty>${foreign.exchange_rate}</KursWaluty>`);

    const correction = demo.invoices.find((invoice) => documents.ksef.has(invoice.id) && invoice.type === 'c')!;
    const corrected = demo.invoices.find((invoice) => invoice.id === correction.correct_of)!;
    const kor = await readFile(documents.ksef.get(correction.id)!, 'utf8');
    expect(kor).toContain('<RodzajFaktury>KOR</RodzajFaktury>');
    expect(kor).toMatch(
      new RegExp(
        `<NrFaKorygowanej>${corrected.nr}</NrFaKorygowanej>\\s*<NrKSeF>1</NrKSeF>\\s*<NrKSeFFaKorygowanej>${corrected.ksef_number}</NrKSeFFaKorygowanej>`,
      ),
    );
  });

  it('when an FA(3) check is given a broken document, then it reports it (the check can fail)', async () => {
    const first = [...documents.ksef.values()][0]!;
    const broken = path.join(dir, 'broken-fa3.xml');
    await writeFile(broken, (await readFile(first, 'utf8')).replace(/<NIP>\d+<\/NIP>/, '<NIP>0000000000</NIP>'));
    expect((await xsdErrors(XSD.ksefFa3, [broken], KSEF_CATALOG)).join('\n')).toMatch(/NIP/);
  });

  it.each(Object.keys(RULES) as Array<keyof typeof RULES>)(
    'when a covering sample of %s is checked, then the EN 16931 rules and then the national rules raise no fatal or error',
    async (format) => {
      const applicable = demo.invoices.filter((invoice) => documents[format].has(invoice.id));
      const sample = everyDocument ? applicable : coveringSample(applicable);
      expect(sample.length).toBeGreaterThan(2);
      const failures: string[] = [];
      for (const invoice of sample) {
        for (const rules of RULES[format]) {
          for (const failure of await blockingFailures(rules, documents[format].get(invoice.id)!)) failures.push(`${invoice.id} ${rules}: ${failure}`);
        }
      }
      expect(failures).toEqual([]);
    },
    everyDocument ? 1_800_000 : 600_000,
  );

  it.each([
    ['xrechnung-ubl', /BR-DE-15/, (xml: string) => xml.replace(/<cbc:BuyerReference>[^<]*<\/cbc:BuyerReference>/, '')],
    ['peppol', /PEPPOL-EN16931-R001/, (xml: string) => xml.replace(/<cbc:ProfileID>[^<]*<\/cbc:ProfileID>/, '')],
    [
      'cius-ro',
      /BR-RO-110/,
      (xml: string) => xml.replace(/<cbc:CountrySubentity>RO-[A-Z]+<\/cbc:CountrySubentity>/, '<cbc:CountrySubentity>Brasov</cbc:CountrySubentity>'),
    ],
  ] as const)(
    'when the %s rules are given a document that breaks them, then they fail it (the check can fail)',
    async (format, rule, spoil) => {
      const file = [...documents[format].values()][0]!;
      const broken = path.join(dir, `broken-${format}.xml`);
      await writeFile(broken, spoil(await readFile(file, 'utf8')));
      expect((await blockingFailures(RULES[format][1], broken)).join('\n')).toMatch(rule);
    },
    120_000,
  );
});
