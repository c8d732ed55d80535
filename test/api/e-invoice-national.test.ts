import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { KSEF_CATALOG, schematronFailures, XSD, xsdErrors, type RuleSet } from '../support/xml-validation.js';
import { generatedNames, NAMES, xmlSafe } from '../support/names-in-every-script.js';

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

/**
 * Names in every script (test/support/names-in-every-script.ts, the set the writer's own test runs through each
 * syntax's XSD) through the national rules too: over HTTP, each name as a seller (the client's company), a buyer and an
 * item, in XRechnung (UBL and CII), Peppol and CIUS-RO, checked by the EN 16931 rules and then the national ones.
 */
describe('national e-invoices of names in every script', () => {
  const SCHEMATRON_FORMATS = Object.keys(RULES) as Array<keyof typeof RULES>;
  const names = [...NAMES, ...generatedNames(4, 38)];
  /** Half the names on each of two invoices a format applies to: as the buyer (joined) and one an item. */
  const halves = [names.slice(0, Math.ceil(names.length / 2)), names.slice(Math.ceil(names.length / 2))];
  const run = promisify(execFile);
  const picked = new Map<Format, Array<{ invoice: DemoInvoice; names: string[] }>>();
  const taken = new Set<number>();
  const takenClients = new Set<string>();
  for (const format of SCHEMATRON_FORMATS) {
    const candidates = demo.invoices.filter((invoice) => APPLIES[format](invoice) && invoice.type !== 'p' && !taken.has(invoice.id));
    // Invoices of clients not renamed yet first, so that more sellers carry a name.
    const ordered = [...candidates.filter((invoice) => !takenClients.has(invoice.directory)), ...candidates];
    const chosen: DemoInvoice[] = [];
    for (const invoice of ordered) if (chosen.length < 2 && !chosen.includes(invoice) && invoice.items.length > 0) chosen.push(invoice);
    for (const invoice of chosen) {
      taken.add(invoice.id);
      takenClients.add(invoice.directory);
    }
    picked.set(
      format,
      chosen.map((invoice, half) => ({ invoice, names: halves[half]! })),
    );
  }
  /** Each client a name of the list as its company, so a seller carries it. */
  const companyNames = new Map(demo.clients.map((client, index) => [client.directory, names[index % names.length]!]));
  const buyerName = (half: string[]) => half.join(' | ');

  let namedApi: TestApi;
  let namedDir: string;
  const named = new Map<string, string>();
  /**
   * Each name as the database gives it back: UTF-8 cannot carry a lone surrogate, and MariaDB keeps one U+FFFD in its
   * place where SQLite keeps three; the writer gets what is stored.
   */
  const stored = new Map<string, string>();
  const storedName = (name: string) => stored.get(name)!;

  beforeAll(async () => {
    namedApi = await startTestApi(
      {},
      {
        label: 'einvoice-national-names',
        beforeStart: async (_dataDir, { knex }) => {
          await loadFixtures(knex, demo, { hasher: new Sha256ApiKeyHasher() });
          // Written to the rows, past the loader, so that what XML forbids reaches the writer as a client's data could.
          for (const [directory, name] of companyNames) await knex('clients').where({ directory }).update({ company_name: name });
          for (const chosen of picked.values()) {
            for (const { invoice, names: half } of chosen) {
              await knex('invoices')
                .where({ id: invoice.id })
                .update({ customer_name: buyerName(half) });
              const items = await knex('invoice_items').where({ invoice_id: invoice.id }).orderBy('position').select<Array<{ position: number }>>('position');
              for (const [index, { position }] of items.entries())
                await knex('invoice_items')
                  .where({ invoice_id: invoice.id, position })
                  .update({ name: half[index % half.length] });
            }
          }
          // Each name once through a row and back (the first client's, left with its own name after).
          const probe = knex('clients').where({ directory: demo.clients[0]!.directory });
          for (const name of [...names, ...halves.map(buyerName)]) {
            await probe.clone().update({ company_name: name });
            stored.set(name, (await probe.clone().first<{ company_name: string }>('company_name')).company_name);
          }
          await probe.clone().update({ company_name: companyNames.get(demo.clients[0]!.directory)! });
        },
      },
    );
    namedDir = path.join(namedApi.dataDir, 'national-names');
    await mkdir(namedDir, { recursive: true });
    for (const [format, chosen] of picked) {
      for (const { invoice } of chosen) {
        const response = await fetch(`${namedApi.base}/invoices/${invoice.id}/e-invoice?format=${format}`, {
          headers: { Authorization: `Bearer ${keys.get(invoice.directory)}`, 'X-Client-Directory': invoice.directory },
        });
        const body = Buffer.from(await response.arrayBuffer());
        expect(response.status, `${format} ${invoice.id}: ${body.toString('utf8').slice(0, 300)}`).toBe(200);
        const file = path.join(namedDir, `${format}-${invoice.id}.xml`);
        await writeFile(file, body);
        named.set(`${format} ${invoice.id}`, file);
      }
    }
  }, 300_000);

  afterAll(async () => {
    await namedApi?.stop();
  });

  /** The text of the first element with this local name under the first one with that parent's local name. */
  async function textAt(file: string, parent: string, child: string): Promise<string> {
    const xpath = `string((//*[local-name()='${parent}']//*[local-name()='${child}'])[1])`;
    const { stdout } = await run('xmllint', ['--nonet', '--xpath', xpath, file]);
    // xmllint ends what it prints with a line break.
    return stdout.slice(0, -1);
  }

  it('when names in every script are the seller, the buyer and the items, then each format applies to two invoices carrying them all', () => {
    for (const format of SCHEMATRON_FORMATS) {
      expect(
        picked.get(format)!.map(({ names: half }) => half),
        format,
      ).toEqual(halves);
    }
    expect(new Set([...picked.values()].flat().map(({ invoice }) => invoice.directory)).size).toBeGreaterThan(1);
  });

  it.each(SCHEMATRON_FORMATS)(
    'when %s carries names in every script, then the EN 16931 and the national rules raise no fatal or error, and the names are there without what XML forbids',
    async (format) => {
      const failures: string[] = [];
      const UBL = format !== 'xrechnung-cii';
      for (const { invoice, names: half } of picked.get(format)!) {
        const file = named.get(`${format} ${invoice.id}`)!;
        for (const rules of RULES[format]) for (const failure of await blockingFailures(rules, file)) failures.push(`${invoice.id} ${rules}: ${failure}`);
        const [buyerParty, sellerParty, nameOf] = UBL
          ? ['AccountingCustomerParty', 'AccountingSupplierParty', 'RegistrationName']
          : ['BuyerTradeParty', 'SellerTradeParty', 'Name'];
        expect(await textAt(file, buyerParty, nameOf), `${format} ${invoice.id} buyer`).toBe(xmlSafe(storedName(buyerName(half))));
        expect(await textAt(file, sellerParty, nameOf), `${format} ${invoice.id} seller`).toBe(xmlSafe(storedName(companyNames.get(invoice.directory)!)));
        const itemNames = await itemTexts(file, UBL ? 'Item' : 'SpecifiedTradeProduct');
        expect(itemNames, `${format} ${invoice.id} items`).toEqual(half.slice(0, itemNames.length).map((name) => xmlSafe(storedName(name))));
        expect(itemNames.length).toBe(Math.min(half.length, invoice.items.length));
      }
      expect(failures).toEqual([]);
    },
    300_000,
  );

  /** The names of an invoice's items, in order: each element with the local name Name right under one named `parent`. */
  async function itemTexts(file: string, parent: string): Promise<string[]> {
    const count = Number((await run('xmllint', ['--nonet', '--xpath', `count(//*[local-name()='${parent}']/*[local-name()='Name'])`, file])).stdout);
    const texts: string[] = [];
    for (let nth = 1; nth <= count; nth += 1) {
      const { stdout } = await run('xmllint', ['--nonet', '--xpath', `string((//*[local-name()='${parent}']/*[local-name()='Name'])[${nth}])`, file]);
      texts.push(stdout.slice(0, -1));
    }
    return texts;
  }
});
