import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { defaultInvoiceCriteria, type InvoiceCriteria } from '@logi/domain';
import { indexPendingDocuments, KnexInvoiceRepository, KnexOrderRepository, loadFixtures, rebuildDerivedData, Sha256ApiKeyHasher } from '@logi/adapters';
import { applyInvoiceFilters, invoiceOrderBy } from '../../packages/adapters/src/knex/invoice-list.query.js';
import { dialectOf } from '../../packages/adapters/src/knex/sql-dialect.js';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';

/**
 * The trigram index and the kept counts may narrow candidates and answer
 * totals, never change a result: after every kind of write (a load, a changed
 * reload, the same reload, rows written straight into the tables, a rebuild)
 * every list and lookup answers exactly what a plain scan with the same
 * predicates answers.
 */
const DIRECTORY = 'derived-haulage';
const OTHER = 'derived-other';

const CUSTOMERS = [
  'Łódź Cargo Sp. z o.o.',
  'ŁÓDŹ TRANS',
  'Straße Logistik GmbH',
  'STRASSE Logistik GmbH',
  'łódź cargo sp. z o.o.',
  'Cargo 100%_sure',
  'Back\\slash Freight',
  'Kraków Spedycja',
  'Ørsted Shipping',
  'İstanbul Nakliyat',
  'cargo-east',
];
const ITEMS = ['Road freight Gdańsk–Berlin', 'Demurrage 50%', 'Fuel_surcharge', 'Customs clearance \\ export', 'Straßentransport', 'Übergröße'];

interface Version {
  /** Changes nrs, names, items and statuses of some invoices, and adds some. */
  edit: boolean;
}

function dataSet(count: number, { edit }: Version) {
  const statuses = ['issued', 'paid', 'semipaid', 'overdue'] as const;
  const types = ['s', 's', 'c', 'p'] as const;
  const total = edit ? count + 40 : count;
  const invoices = Array.from({ length: total }, (_, index) => {
    const id = index + 1;
    const changed = edit && id % 7 === 0;
    const issue = Date.UTC(2025, 0, 1) / 1000 + ((id * 7919) % 700) * 86_400;
    const gross = ((id * 104_729) % 50_000) / 10;
    return {
      id,
      directory: id % 9 === 0 ? OTHER : DIRECTORY,
      nr: changed ? `KOR/${id}/2026` : `FV/${(id % 12) + 1}/2026/${String(id).padStart(5, '0')}`,
      type: types[id % types.length],
      status: statuses[(changed ? id + 1 : id) % statuses.length],
      branch_id: (id % 4) + 1,
      issue_date: issue,
      service_date: issue - 86_400,
      payment_term: issue + 14 * 86_400,
      payment_date: id % 3 === 0 ? issue + 86_400 : null,
      customer_name: `${CUSTOMERS[(changed ? id + 3 : id) % CUSTOMERS.length]} ${id % 50}`,
      customer_vat: `PL${String(id % 40).padStart(10, '0')}`,
      customer_country: id % 5 === 0 ? 'de' : 'pl',
      customer_address: 'Street 1',
      currency: 'EUR',
      amount_net: gross,
      amount_tax: 0,
      amount_gross: gross,
      paid: 0,
      left_to_pay: gross,
      correct_of: null,
      added_time: issue + 3_600,
      orders: Array.from({ length: id % 3 }, (_, position) => ({
        type: 'FTL',
        nr: changed ? `ZL/${id}-${position}` : `ORD/2026/${String(id * 3 + position).padStart(6, '0')}`,
        cmr: `CMR ${id}`,
        tasks: [],
        files: [],
        contacts: [],
      })),
      items: Array.from({ length: (id % 2) + 1 }, (_, position) => ({
        name: `${ITEMS[(changed ? id + position + 1 : id + position) % ITEMS.length]} ${id}`,
        quantity: 1,
        unit: 'pcs',
        unit_price_net: gross,
        tax_rate: '23',
        amount_net: gross,
        amount_tax: 0,
        amount_gross: gross,
      })),
    };
  });
  const orders = Array.from({ length: total }, (_, index) => {
    const id = index + 1;
    return {
      id,
      directory: id % 9 === 0 ? OTHER : DIRECTORY,
      nr: edit && id % 5 === 0 ? `ZL/${id}/NEW` : `ORD/2026/${String(id * 3).padStart(6, '0')}`,
      ownnr: `OWN-${id}`,
    };
  });
  const client = (directory: string, key: string) => ({
    directory,
    api_key: key,
    company: { name: 'B', address: 'A', vat: 'V', bank_account: 'X', bank_name: 'Y' },
  });
  return { clients: [client(DIRECTORY, 'derived-key-1'), client(OTHER, 'derived-key-2')], file_categories: [], orders, invoices };
}

/** Fragments of every kind: hits in each text, misses, 1-2 characters, wildcards taken literally, folding. */
const FRAGMENTS = [
  '2026/00012',
  '/2026/',
  'ORD/2026/0003',
  '000',
  'freight gda',
  'DEMURRAGE 50%',
  '50%',
  'fuel_s',
  '_',
  '%',
  '\\',
  'straße',
  'STRASSE',
  'übergr',
  'łódź',
  'lodz',
  'ŁÓDŹ',
  'KOR/',
  'ZL/',
  '12',
  '7',
  'no-such-text',
  'zzzz',
  'istanbul',
  'İSTANBUL',
  'ørsted',
  'cargo',
  'ee',
  ' 1',
];

function criteriaList(): InvoiceCriteria[] {
  const base = defaultInvoiceCriteria(DIRECTORY);
  const list: InvoiceCriteria[] = [
    base,
    { ...base, perPage: 17, page: 3 },
    { ...base, perPage: 17, page: 29 },
    { ...base, perPage: 50, page: 9, sortBy: 'amount_gross', sortDir: 'asc' },
    { ...base, perPage: 25, page: 20, sortBy: 'nr', sortDir: 'asc' },
    { ...base, perPage: 25, page: 14, sortBy: 'customer_name', sortDir: 'desc' },
    { ...base, perPage: 30, page: 12, sortBy: 'payment_date', sortDir: 'asc' },
    { ...base, statuses: ['issued', 'paid'], types: ['s', 'c'], perPage: 20, page: 7, sortBy: 'nr' },
    { ...base, branchIds: [2, 3], statuses: ['overdue'] },
    { ...base, customerVats: ['pl0000000007'], perPage: 5, page: 2 },
    { ...base, customerCountry: 'de', perPage: 10, page: 4 },
    { ...base, customerCountry: 'cz', statuses: ['paid'] },
    {
      ...base,
      dateFilter: { field: 'issue_date', range: { from: Date.UTC(2025, 3, 1) / 1000, toExclusive: Date.UTC(2025, 9, 1) / 1000 } },
      perPage: 40,
      page: 3,
    },
  ];
  for (const fragment of FRAGMENTS) {
    list.push({ ...base, search: fragment, perPage: 10, page: 1 });
    list.push({ ...base, search: fragment, perPage: 7, page: 3, sortBy: 'nr', sortDir: 'asc' });
    list.push({ ...base, customerName: fragment, perPage: 10, page: 2 });
  }
  list.push({ ...base, search: '2026', customerName: 'cargo', statuses: ['paid', 'issued'], perPage: 9, page: 2 });
  list.push({ ...base, search: 'freight', customerName: 'łódź', perPage: 5, page: 1 });
  return list;
}

/** The plain scan: the same predicates with no index candidates, no kept counts, no cache, the whole ordered list. */
async function scan(knex: Knex, criteria: InvoiceCriteria): Promise<{ total: number; ids: number[] }> {
  const dialect = dialectOf(knex);
  const rows: Array<{ id: unknown }> = await applyInvoiceFilters(knex('invoices as i'), criteria, dialect)
    .select('i.id')
    .orderByRaw(invoiceOrderBy(criteria, dialect));
  const ids = rows.map((row) => Number(row.id));
  const offset = (criteria.page - 1) * criteria.perPage;
  return { total: ids.length, ids: ids.slice(offset, offset + criteria.perPage) };
}

/** The by-nr answer as a plain scan gives it: exact (case-insensitive) first, then the lowest id. */
async function scanByNr(knex: Knex, fragment: string): Promise<number | null> {
  const dialect = dialectOf(knex);
  const contains = dialect.contains('nr', fragment);
  const exact = dialect.equals('nr', fragment);
  const row = (await knex('orders')
    .select('id')
    .where({ directory: DIRECTORY })
    .whereRaw(contains.sql, contains.bindings)
    .orderByRaw(`CASE WHEN ${exact.sql} THEN 0 ELSE 1 END, id ASC`, exact.bindings)
    .first()) as { id: unknown } | undefined;
  return row ? Number(row.id) : null;
}

/** Posting-list caps that make the 440 documents' trigrams common: 3 nearly all, 40 the frequent ones. */
const LOW_CAPS = [3, 40];

const BY_NR = ['ORD/2026/000030', 'ord/2026/000030', '2026/0000', '/NEW', 'zl/10/new', 'ZL/', '0003', 'no-such-order', '30', '%', '_'];

describe.each(PROFILES)('derived search data on %s', (profile) => {
  let db: TestDatabase;
  let invoices: KnexInvoiceRepository;
  let orders: KnexOrderRepository;
  const hasher = new Sha256ApiKeyHasher();

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'derived');
    invoices = new KnexInvoiceRepository(db.knex);
    orders = new KnexOrderRepository(db.knex);
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  /**
   * Every list and lookup against the plain scan; a fresh repository too, so no cached total hides a
   * difference, and repositories whose posting-list cap makes most trigrams common (the paths a
   * million invoices take: the join of common lists in the database, customer names from an index).
   */
  async function expectSameAsScan(): Promise<void> {
    for (const repository of [
      invoices,
      new KnexInvoiceRepository(db.knex),
      ...LOW_CAPS.map((postingsCap) => new KnexInvoiceRepository(db.knex, { postingsCap })),
    ]) {
      for (const criteria of criteriaList()) {
        const page = await repository.list(criteria);
        const expected = await scan(db.knex, criteria);
        expect({ criteria, total: page.total, ids: page.invoices.map((i) => i.id) }).toEqual({ criteria, ...expected });
      }
    }
    for (const repository of [orders, ...LOW_CAPS.map((postingsCap) => new KnexOrderRepository(db.knex, { postingsCap }))]) {
      for (const fragment of BY_NR) {
        expect({ fragment, id: (await repository.findFirstByNr(DIRECTORY, fragment))?.id ?? null }).toEqual({
          fragment,
          id: await scanByNr(db.knex, fragment),
        });
      }
    }
  }

  it('when data is loaded, changed, reloaded, written behind the service and rebuilt, then every total and search equals a plain scan', async () => {
    await loadFixtures(db.knex, dataSet(400, { edit: false }), { hasher });
    expect(await db.knex('search_pending').count({ n: '*' })).toEqual([{ n: 0 }]);
    await expectSameAsScan();

    // A changed file: nrs, names, items, statuses and related orders change; invoices are added.
    await loadFixtures(db.knex, dataSet(400, { edit: true }), { hasher });
    await expectSameAsScan();

    // The same file again changes nothing.
    await loadFixtures(db.knex, dataSet(400, { edit: true }), { hasher });
    await expectSameAsScan();

    // Rows written straight into the tables (an ERP's bulk load): counts and versions follow by triggers,
    // the written documents wait in the pending list and are candidates until indexed.
    const template = (await db.knex('invoices').where({ id: 1 }).first()) as Record<string, unknown>;
    await db.knex('invoices').insert({ ...template, id: 5000, nr: 'ERP/IMPORTED/777', customer_name: 'Imported Łódź Cargo', status: 'overdue' });
    await db.knex('invoice_items').insert({
      invoice_id: 5000,
      position: 0,
      name: 'Freight Gdańsk imported',
      quantity: 1,
      unit: 'pcs',
      unit_price_net: 1,
      tax_rate: '23',
      amount_net: 1,
      amount_tax: 0,
      amount_gross: 1,
    });
    await db.knex('invoices').where({ id: 2 }).update({ nr: 'ERP/RENAMED/002', status: 'paid', branch_id: 4, customer_country: 'cz' });
    await db.knex('invoice_orders').insert({ invoice_id: 3, position: 9, type: 'FTL', nr: 'ERP-ORDER-333', cmr: '', tasks: '[]', files: '[]', contacts: '[]' });
    await db.knex('invoice_items').where({ invoice_id: 4 }).update({ name: 'Renamed item straße' });
    await db.knex('invoices').where({ id: 5 }).delete();
    await db.knex('orders').insert({ id: 9000, directory: DIRECTORY, nr: 'ERP/ORDER/9000', ownnr: 'x' });
    await db.knex('orders').where({ id: 10 }).update({ nr: 'ERP/RENAMED-ORDER/10' });
    expect(Number(((await db.knex('search_pending').count({ n: '*' }).first()) as { n: unknown }).n)).toBeGreaterThan(0);
    await expectSameAsScan();
    expect((await invoices.list({ ...defaultInvoiceCriteria(DIRECTORY), search: 'ERP/IMPORTED' })).invoices.map((i) => i.id)).toEqual([5000]);
    expect((await orders.findFirstByNr(DIRECTORY, 'ERP/ORDER'))?.id).toBe(9000);

    // The API's housekeeping indexes pending documents a batch at a time; answers stay the same.
    const pendingCount = Number(((await db.knex('search_pending').count({ n: '*' }).first()) as { n: unknown }).n);
    expect(await indexPendingDocuments(db.knex, 3)).toBe(3);
    let handled = 3;
    for (let batch = await indexPendingDocuments(db.knex, 4); batch > 0; batch = await indexPendingDocuments(db.knex, 4)) handled += batch;
    expect(handled).toBe(pendingCount);
    expect(await db.knex('search_pending').count({ n: '*' })).toEqual([{ n: 0 }]);
    await expectSameAsScan();
    expect((await orders.findFirstByNr(DIRECTORY, 'RENAMED-ORDER'))?.id).toBe(10);

    // A document changed again after it was indexed is listed again.
    await db.knex('invoices').where({ id: 5000 }).update({ nr: 'ERP/IMPORTED/778' });
    expect(await db.knex('search_pending').count({ n: '*' })).toEqual([{ n: 2 }]);
    await expectSameAsScan();

    // The rebuild indexes them and empties the pending list; answers stay the same.
    const rebuilt = await rebuildDerivedData(db.knex);
    expect(rebuilt.invoices).toBe(440);
    expect(await db.knex('search_pending').count({ n: '*' })).toEqual([{ n: 0 }]);
    await expectSameAsScan();
  }, 240_000);

  it('when every trigram of a fragment is common, then the invoices are narrowed by a join of posting lists in the database, not scanned', async () => {
    const statements: string[] = [];
    const listener = (query: { sql: string }) => statements.push(query.sql);
    db.knex.on('query', listener);
    try {
      const repository = new KnexInvoiceRepository(db.knex, { postingsCap: 3 });
      const base = defaultInvoiceCriteria(DIRECTORY);
      for (const criteria of [
        { ...base, search: 'freight gda' },
        { ...base, search: 'freight gda', perPage: 3, page: 2 },
        { ...base, search: 'straße' },
      ]) {
        const page = await repository.list(criteria);
        expect(page.total).toBe((await scan(db.knex, criteria)).total);
        expect(page.total).toBeGreaterThan(0);
      }
    } finally {
      db.knex.off('query', listener);
    }
    const onInvoices = statements.filter((sql) => /from [`"]?invoices[`"]? as [`"]?i[`"]?/i.test(sql));
    expect(onInvoices.some((sql) => /i\.id IN \(SELECT t0\.doc FROM search_trigrams t0 JOIN search_trigrams t1/.test(sql))).toBe(true);
  });

  it('when the kept customer-name counts are compared with a GROUP BY over the exact names, then they are equal', async () => {
    const name = profile === 'mariadb' ? 'customer_name COLLATE utf8mb4_bin' : 'customer_name';
    const kept = (await db.knex('customer_name_counts').select('directory', 'customer_name', 'n').where('n', '>', 0)) as Array<Record<string, unknown>>;
    const result = await db.knex.raw(`SELECT directory, ${name} AS customer_name, COUNT(*) AS n FROM invoices GROUP BY directory, ${name}`);
    // MariaDB answers [rows, fields]; SQLite, the rows.
    const grouped: Array<Record<string, unknown>> = profile === 'mariadb' ? result[0] : result;
    const key = (row: Record<string, unknown>) => `${String(row.directory)}|${String(row.customer_name)}=${Number(row.n)}`;
    expect(kept.map(key).sort()).toEqual(grouped.map(key).sort());
    expect(kept.length).toBeGreaterThan(9);
  });

  it('when the kept counts are compared with a GROUP BY, then they are equal', async () => {
    const columns = ['directory', 'type', 'status', 'branch_id', 'customer_country'];
    const kept = (await db
      .knex('invoice_counts')
      .select([...columns, 'n'])
      .where('n', '>', 0)) as Array<Record<string, unknown>>;
    const grouped: Array<Record<string, unknown>> = await db.knex('invoices').select(columns).count({ n: '*' }).groupBy(columns);
    const key = (row: Record<string, unknown>) => `${columns.map((column) => String(row[column])).join('|')}=${Number(row.n)}`;
    expect(kept.map(key).sort()).toEqual(grouped.map(key).sort());
  });
});
