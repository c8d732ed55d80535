import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixtureValidationError, KnexClientRepository, KnexInvoiceRepository, loadFixtures, Sha256ApiKeyHasher, type FixtureProgress } from '@logi/adapters';
import { openTestDatabase, PROFILES, snapshot, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture } from './knex-repository.fixture.js';

const hasher = new Sha256ApiKeyHasher();
const clone = <T>(value: T): T => structuredClone(value);

async function emptyTables(db: TestDatabase): Promise<void> {
  for (const table of ['invoice_items', 'invoice_orders', 'invoices', 'order_files', 'orders', 'file_categories', 'clients']) await db.knex(table).delete();
}

async function rowCounts(db: TestDatabase): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['clients', 'file_categories', 'orders', 'invoices', 'invoice_orders', 'invoice_items']) {
    const [row] = await db.knex(table).count({ n: '*' });
    counts[table] = Number(row?.n);
  }
  return counts;
}

async function refusal(db: TestDatabase, json: unknown): Promise<FixtureValidationError> {
  const error = await loadFixtures(db.knex, json, { hasher }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(FixtureValidationError);
  return error as FixtureValidationError;
}

describe('loadFixtures validation (no database needed for the shape)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase('sqlite', 'fixture_shape');
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('when an invoice has an unknown type, then the file is refused naming invoices[3].type and nothing is written', async () => {
    const bad = clone(repositoryFixture);
    (bad.invoices[3] as { type: string }).type = 'x';
    const error = await refusal(db, bad);
    expect(error.path).toBe('invoices[3].type');
    expect(error.message).toMatch(/^Invalid fixture file at invoices\[3\]\.type: /);
    expect(await rowCounts(db)).toEqual({ clients: 0, file_categories: 0, orders: 0, invoices: 0, invoice_orders: 0, invoice_items: 0 });
  });

  it.each([
    [
      'a missing field',
      'invoices[1].customer_name',
      (f: any) => {
        delete f.invoices[1].customer_name;
      },
    ],
    [
      'a nested bad value',
      'invoices[2].items[0].tax_rate',
      (f: any) => {
        f.invoices[2].items[0].tax_rate = '23%';
      },
    ],
    [
      'a wrong type in orders',
      'invoices[0].orders[1].tasks',
      (f: any) => {
        f.invoices[0].orders[1].tasks = 'none';
      },
    ],
    [
      'an amount with three decimals',
      'invoices[4].amount_gross',
      (f: any) => {
        f.invoices[4].amount_gross = 1.005;
      },
    ],
    [
      'an unknown field',
      'orders[2]',
      (f: any) => {
        f.orders[2].colour = 'red';
      },
    ],
    [
      'a category flag other than 0/1',
      'file_categories[1].visible_customer',
      (f: any) => {
        f.file_categories[1].visible_customer = 2;
      },
    ],
    [
      'a client without key',
      'clients[0].api_key',
      (f: any) => {
        delete f.clients[0].api_key;
      },
    ],
    [
      'a country of three letters',
      'invoices[0].customer_country',
      (f: any) => {
        f.invoices[0].customer_country = 'pol';
      },
    ],
  ])('when the file has %s, then the error names %s', async (_case, path, spoil) => {
    const bad = clone(repositoryFixture);
    spoil(bad);
    expect((await refusal(db, bad)).path).toBe(path);
  });

  it('when the file is not an object, then the error names the root', async () => {
    expect((await refusal(db, 'not json')).path).toBe('(root)');
    expect((await refusal(db, [])).path).toBe('(root)');
  });

  it('when two rows share an id, then the later one is named', async () => {
    const bad = clone(repositoryFixture);
    bad.orders[4]!.id = bad.orders[1]!.id;
    expect((await refusal(db, bad)).message).toBe('Invalid fixture file at orders[4].id: duplicates orders[1].id');
  });

  it('when an order or invoice names an unknown directory, then the file is refused', async () => {
    const badOrder = clone(repositoryFixture);
    badOrder.orders[2]!.directory = 'ghost';
    expect((await refusal(db, badOrder)).path).toBe('orders[2].directory');
    const badInvoice = clone(repositoryFixture);
    badInvoice.invoices[5]!.directory = 'ghost';
    expect((await refusal(db, badInvoice)).path).toBe('invoices[5].directory');
  });

  it("when correct_of names no invoice, another directory's, or sits on a non-correcting invoice, then the file is refused", async () => {
    const missing = clone(repositoryFixture);
    missing.invoices[2]!.correct_of = 99_999;
    expect((await refusal(db, missing)).message).toBe('Invalid fixture file at invoices[2].correct_of: names no invoice (99999)');
    const foreign = clone(repositoryFixture);
    foreign.invoices[2]!.correct_of = 201;
    expect((await refusal(db, foreign)).path).toBe('invoices[2].correct_of');
    const notCorrecting = clone(repositoryFixture);
    notCorrecting.invoices[0]!.correct_of = 102;
    expect((await refusal(db, notCorrecting)).path).toBe('invoices[0].correct_of');
    expect((await rowCounts(db)).invoices).toBe(0);
  });
});

describe.each(PROFILES)('loadFixtures on %s', (profile) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'fixtures');
  });

  beforeEach(async () => {
    await emptyTables(db);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('when a file is loaded, then every row is written, keys stored only as hashes, progress reported', async () => {
    const progress: FixtureProgress[] = [];
    const result = await loadFixtures(db.knex, repositoryFixture, { hasher, onProgress: (p) => progress.push(p) });
    expect(result).toEqual({ clients: 3, fileCategories: 2, orders: 7, invoices: 28, invoiceOrders: 29, invoiceItems: 30 });
    expect(await rowCounts(db)).toEqual({ clients: 3, file_categories: 2, orders: 7, invoices: 28, invoice_orders: 29, invoice_items: 30 });
    const client = await db.knex('clients').where({ directory: NORTH }).first();
    expect(client.api_key_hash).toBe(hasher.hash('north-key-0123456789'));
    expect(JSON.stringify(await db.knex('clients').select('*'))).not.toContain('north-key');
    expect(progress.map((p) => p.table)).toEqual(['clients', 'file_categories', 'orders', 'invoices']);
    expect(progress.at(-1)).toEqual({ table: 'invoices', done: 28, total: 28 });
  });

  it('when the same file is loaded twice, then nothing changes', async () => {
    await loadFixtures(db.knex, repositoryFixture, { hasher, now: () => 1_000 });
    const before = await snapshot(db.knex);
    await loadFixtures(db.knex, repositoryFixture, { hasher, now: () => 2_000 });
    expect(await snapshot(db.knex)).toEqual(before);
  });

  it("when a changed file is loaded, then rows are updated by id and an invoice's orders and items replaced", async () => {
    await loadFixtures(db.knex, repositoryFixture, { hasher });
    const changed = clone(repositoryFixture);
    changed.invoices[0]!.customer_name = 'Renamed';
    changed.invoices[0]!.orders = [changed.invoices[0]!.orders[1]!];
    changed.invoices[0]!.items = [];
    changed.clients[0]!.api_key = 'rotated-key-0123456789';
    const counts = await rowCounts(db);
    await loadFixtures(db.knex, changed, { hasher });
    expect(await rowCounts(db)).toEqual({ ...counts, invoice_orders: counts.invoice_orders! - 1, invoice_items: counts.invoice_items! - 2 });
    expect((await db.knex('invoices').where({ id: 101 }).first()).customer_name).toBe('Renamed');
    expect(await db.knex('invoice_orders').where({ invoice_id: 101 }).select('position', 'nr')).toEqual([{ position: 0, nr: 'ORD-A2' }]);
    expect((await db.knex('clients').where({ directory: NORTH }).first()).api_key_hash).toBe(hasher.hash('rotated-key-0123456789'));
  });

  it('when a later file refers to clients and invoices already stored, then it loads', async () => {
    await loadFixtures(db.knex, repositoryFixture, { hasher });
    const later = {
      orders: [{ id: 50, directory: NORTH, nr: 'LATER-1', ownnr: '' }],
      invoices: [{ ...clone(repositoryFixture.invoices[2]!), id: 150, nr: 'KOR/LATER', correct_of: 101 }],
    };
    await expect(loadFixtures(db.knex, later, { hasher })).resolves.toMatchObject({ orders: 1, invoices: 1 });
    expect((await db.knex('invoices').where({ id: 150 }).first()).correct_of_id).toBe(101);
  });

  it('when the optional national e-invoice fields are given, then they are stored and read back; without them an invoice reads as before', async () => {
    const national = clone(repositoryFixture) as any;
    national.clients[0].company.contact = { name: 'Marta Nowak', phone: '+48 58 320 14 00', email: 'faktury@example.com' };
    national.clients[0].company.county = 'ro-cj';
    Object.assign(national.invoices[0], {
      customer_county: 'RO-B',
      buyer_reference: '04011000-12345-03',
      exchange_rate: 4.2456,
      ksef_number: '5265877635-20250826-0100001AF629-AF',
    });
    await loadFixtures(db.knex, national, { hasher });
    const client = await new KnexClientRepository(db.knex).findByDirectory(NORTH);
    expect(client?.company).toMatchObject({ contact: { name: 'Marta Nowak', phone: '+48 58 320 14 00', email: 'faktury@example.com' }, county: 'RO-CJ' });
    const invoices = new KnexInvoiceRepository(db.knex);
    const detail = await invoices.findDetail(national.invoices[0].directory, national.invoices[0].id);
    expect(detail).toMatchObject({
      customerCounty: 'RO-B',
      buyerReference: '04011000-12345-03',
      exchangeRate: 4.2456,
      ksefNumber: '5265877635-20250826-0100001AF629-AF',
    });
    const plain = await invoices.findDetail(national.invoices[1].directory, national.invoices[1].id);
    expect(Object.keys(plain!).filter((key) => ['customerCounty', 'buyerReference', 'exchangeRate', 'ksefNumber'].includes(key))).toEqual([]);
    // Invoice 103 corrects 101 (invoices[0]): FA(3) names the corrected invoice's issue date and KSeF number.
    const correction = await invoices.findDetail(national.invoices[2].directory, 103);
    expect(correction?.correctedInvoice).toEqual({ issueDate: national.invoices[0].issue_date, ksefNumber: '5265877635-20250826-0100001AF629-AF' });
    // The same file again changes nothing.
    const before = await snapshot(db.knex);
    await loadFixtures(db.knex, national, { hasher });
    expect(await snapshot(db.knex)).toEqual(before);
  });

  it.each([
    ['a county that is no ISO 3166-2 code', 'invoices[0].customer_county', (f: any) => (f.invoices[0].customer_county = 'Cluj')],
    ['a zero exchange rate', 'invoices[0].exchange_rate', (f: any) => (f.invoices[0].exchange_rate = 0)],
    ['a malformed KSeF number', 'invoices[0].ksef_number', (f: any) => (f.invoices[0].ksef_number = '5265877635-2025')],
    ['a KSeF number whose CRC-8 is wrong', 'invoices[0].ksef_number', (f: any) => (f.invoices[0].ksef_number = '5265877635-20250826-0100001AF629-AE')],
    ['a buyer reference over 200 characters', 'invoices[0].buyer_reference', (f: any) => (f.invoices[0].buyer_reference = 'x'.repeat(201))],
    [
      'a contact without an e-mail address',
      'clients[0].company.contact.email',
      (f: any) => (f.clients[0].company.contact = { name: 'A', phone: '1', email: 'none' }),
    ],
  ])('when a file has %s, then it is refused naming %s', async (_what, at, spoil) => {
    const bad = clone(repositoryFixture) as any;
    spoil(bad);
    expect((await refusal(db, bad)).path).toBe(at);
  });

  it('when a reference check fails, then nothing of the file is written', async () => {
    const bad = clone(repositoryFixture);
    bad.invoices[6]!.directory = 'ghost';
    await expect(loadFixtures(db.knex, bad, { hasher })).rejects.toThrow('invoices[6].directory');
    expect(await rowCounts(db)).toEqual({ clients: 0, file_categories: 0, orders: 0, invoices: 0, invoice_orders: 0, invoice_items: 0 });
  });
});
