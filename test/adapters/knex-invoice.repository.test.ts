import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvoiceCriteria, InvoiceSortField } from '@logi/domain';
import { defaultInvoiceCriteria, INVOICE_SORT_FIELDS } from '@logi/domain';
import { KnexInvoiceRepository, loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { countQueries, openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';
import { NORTH, NORTH_IDS, repositoryFixture, SORTING, SOUTH } from './knex-repository.fixture.js';

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000;

function criteria(overrides: Partial<InvoiceCriteria> = {}): InvoiceCriteria {
  return { ...defaultInvoiceCriteria(NORTH), ...overrides };
}

describe.each(PROFILES)('KnexInvoiceRepository on %s', (profile) => {
  let db: TestDatabase;
  let repo: KnexInvoiceRepository;
  const ids = async (overrides: Partial<InvoiceCriteria>) => (await repo.list(criteria(overrides))).invoices.map((i) => i.id);

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'invoices');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    repo = new KnexInvoiceRepository(db.knex);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it("when nothing is asked, then all of the directory's invoices, newest issue date first, ties by id descending", async () => {
    const page = await repo.list(criteria());
    expect(page.total).toBe(7);
    // 106 and 105 share 2026-11-05, 103 and 102 share 2026-11-02.
    expect(page.invoices.map((i) => i.id)).toEqual([107, 106, 105, 103, 102, 101, 104]);
  });

  it('when another directory lists, then it sees only its own invoices', async () => {
    const page = await repo.list(criteria({ directory: SOUTH }));
    expect(page.total).toBe(2);
    expect(page.invoices.map((i) => [i.id, i.directory])).toEqual([
      [202, SOUTH],
      [201, SOUTH],
    ]);
    expect((await repo.list(criteria({ directory: 'nobody' }))).total).toBe(0);
  });

  it('when an invoice is read, then every field is mapped with numbers as numbers and orders as given', async () => {
    const [invoice] = (await repo.list(criteria({ search: 'FV/2026/002' }))).invoices;
    expect(invoice).toEqual({
      id: 102,
      directory: NORTH,
      nr: 'FV/2026/002',
      type: 's',
      status: 'paid',
      branchId: 2,
      issueDate: day('2026-11-02'),
      serviceDate: day('2026-11-01'),
      paymentTerm: day('2026-11-16'),
      paymentDate: day('2026-11-10'),
      customerName: 'alpha Transport',
      customerVat: 'de222',
      customerCountry: 'de',
      currency: 'EUR',
      amountNet: 203.66,
      amountTax: 46.84,
      amountGross: 250.5,
      paid: 250.5,
      leftToPay: 0,
      correctOf: null,
      addedTime: day('2026-11-02') + 3600,
      orders: [{ type: 'FTL', nr: 'ORD-B1', cmr: 'CMR 102-0', tasks: [{ step: 1, place: 'Łódź' }], files: [], contacts: [{ name: 'Zoë', phone: '+48 1' }] }],
    });
  });

  it('when types, statuses or branches are given, then only invoices in those lists match', async () => {
    expect(await ids({ types: ['c', 'p'] })).toEqual([103, 104]);
    expect(await ids({ statuses: ['paid', 'semipaid'] })).toEqual([106, 105, 102]);
    expect(await ids({ branchIds: [2, 3] })).toEqual([105, 102, 104]);
    expect(await ids({ types: ['s'], statuses: ['paid'], branchIds: [1] })).toEqual([106]);
  });

  it('when VAT numbers are given, then they match exactly, ignoring case', async () => {
    expect(await ids({ customerVats: ['pl111', 'DE222'] })).toEqual([102, 101]);
    expect(await ids({ customerVats: ['PL11'] })).toEqual([]);
  });

  it('when a country is given, then only that country matches', async () => {
    expect(await ids({ customerCountry: 'pl' })).toEqual([101]);
    expect(await ids({ customerCountry: 'gb' })).toEqual([106]);
  });

  it('when a customer name fragment is given, then it matches case-insensitively, Unicode letters included', async () => {
    expect(await ids({ customerName: 'ŁÓDŹ' })).toEqual([107, 101]);
    expect(await ids({ customerName: 'łódź' })).toEqual([107, 101]);
    expect(await ids({ customerName: 'ärzte' })).toEqual([104]);
    expect(await ids({ customerName: 'TRANSPORT' })).toEqual([102]);
    expect(await ids({ customerName: 'a%' })).toEqual([]);
  });

  it('when searching, then the invoice nr, a related order nr or an item name matches, each invoice once', async () => {
    expect(await ids({ search: 'kor/' })).toEqual([103]);
    expect(await ids({ search: 'ord-b1' })).toEqual([102]);
    expect(await ids({ search: 'SURCHARGE' })).toEqual([102]);
    // 101 matches through two orders and an item, and still comes once.
    const page = await repo.list(criteria({ search: 'ORD-A' }));
    expect(page.invoices.map((i) => i.id)).toEqual([101]);
    expect(page.total).toBe(1);
  });

  it('when the text holds %, _ or \\, then they are plain characters, not wildcards', async () => {
    expect(await ids({ search: '%' })).toEqual([106, 102, 104]);
    expect(await ids({ search: '_' })).toEqual([106, 102, 104]);
    expect(await ids({ search: '\\' })).toEqual([102]);
    expect(await ids({ search: '100%' })).toEqual([102]);
    expect(await ids({ search: 'FV_2026' })).toEqual([]);
    expect(await ids({ search: 'FV%2026_' })).toEqual([106]);
    expect(await ids({ search: 'X%Y_Z' })).toEqual([104]);
  });

  it('when a date range is given, then it is half-open on the chosen column and open where an end is null', async () => {
    const range = (from: string | null, to: string | null) => ({ from: from ? day(from) : null, toExclusive: to ? day(to) : null });
    expect(await ids({ dateFilter: { field: 'issue_date', range: range('2026-11-02', '2026-11-05') } })).toEqual([103, 102]);
    expect(await ids({ dateFilter: { field: 'issue_date', range: range(null, '2026-11-02') } })).toEqual([101, 104]);
    expect(await ids({ dateFilter: { field: 'issue_date', range: range('2026-11-05', null) } })).toEqual([107, 106, 105]);
    // Unpaid invoices have no payment date and lie in no payment-date range.
    expect(await ids({ dateFilter: { field: 'payment_date', range: range('2026-11-01', '2026-11-20') } })).toEqual([106, 102]);
    expect(await ids({ dateFilter: { field: 'payment_date', range: range(null, null) } })).toEqual([106, 105, 102]);
    // added_date is the added_time column: 103 was added on 2026-11-21.
    expect(await ids({ dateFilter: { field: 'added_date', range: range('2026-11-21', '2026-11-22') } })).toEqual([103]);
    expect(await ids({ dateFilter: { field: 'service_date', range: range('2026-11-01', '2026-11-02') } })).toEqual([103, 102]);
    expect(await ids({ dateFilter: { field: 'payment_term', range: range('2026-11-21', '2026-11-22') } })).toEqual([107]);
  });

  it('when sorting by payment date, then null is the smallest value: first ascending, last descending', async () => {
    expect(await ids({ sortBy: 'payment_date', sortDir: 'asc' })).toEqual([101, 103, 104, 107, 106, 102, 105]);
    expect(await ids({ sortBy: 'payment_date', sortDir: 'desc' })).toEqual([105, 102, 106, 107, 104, 103, 101]);
  });

  it('when sort values tie, then id breaks the tie in the same direction', async () => {
    expect(await ids({ sortBy: 'amount_gross', sortDir: 'asc' })).toEqual([103, 106, 107, 101, 102, 105, 104]);
    expect(await ids({ sortBy: 'amount_gross', sortDir: 'desc' })).toEqual([104, 105, 102, 101, 107, 106, 103]);
  });

  it.each(
    INVOICE_SORT_FIELDS.flatMap(
      (field) =>
        [
          [field, 'asc'],
          [field, 'desc'],
        ] as Array<[InvoiceSortField, 'asc' | 'desc']>,
    ),
  )('when paging one by one sorted by %s %s, then the pages neither overlap nor skip, and match the full list', async (sortBy, sortDir) => {
    const full = await ids({ sortBy, sortDir });
    const paged: number[] = [];
    for (let page = 1; page <= 7; page++) paged.push(...(await ids({ sortBy, sortDir, page, perPage: 1 })));
    expect(paged).toEqual(full);
    expect([...paged].sort()).toEqual([...NORTH_IDS].sort());
  });

  it('when sorting by text, then case is ignored and ASCII text orders as utf8mb4_unicode_ci does', async () => {
    expect(await ids({ sortBy: 'customer_name', sortDir: 'asc' })).toEqual([102, 104, 103, 106, 101, 107, 105]);
    // Read from MariaDB 10.11: _x | 0ab | A | a c | a_c | a-c | a.c | a@c | a#c | a~c | a$c | a1c | ab | abc | ABD | b10 | B2 | zebra | Zed
    const expected = [317, 316, 314, 305, 304, 303, 306, 312, 313, 309, 308, 307, 315, 301, 302, 319, 318, 311, 310];
    expect(await ids({ directory: SORTING, sortBy: 'customer_name', sortDir: 'asc' })).toEqual(expected);
    expect(await ids({ directory: SORTING, sortBy: 'customer_name', sortDir: 'desc' })).toEqual([...expected].reverse());
    // '/' sorts before '%' in utf8mb4_unicode_ci, unlike in ASCII.
    expect(await ids({ sortBy: 'nr', sortDir: 'asc' })).toEqual([101, 102, 105, 107, 106, 103, 104]);
  });

  it('when the page is past the end, then no invoices and the right total, with no query for rows', async () => {
    const { result, queries } = await countQueries(db.knex, () => repo.list(criteria({ page: 8, perPage: 1 })));
    expect(result).toEqual({ invoices: [], total: 7 });
    expect(queries).toHaveLength(1);
    expect(await repo.list(criteria({ page: 2, perPage: 5 }))).toMatchObject({ total: 7 });
    expect(await ids({ page: 2, perPage: 5 })).toEqual([101, 104]);
    expect(await repo.list(criteria({ page: 1, search: 'nothing like this' }))).toEqual({ invoices: [], total: 0 });
  });

  it('when a page is listed, then its orders come in one query (no N+1)', async () => {
    const { result, queries } = await countQueries(db.knex, () => repo.list(criteria()));
    expect(result.invoices.find((i) => i.id === 101)?.orders.map((o) => o.nr)).toEqual(['ORD-A1', 'ORD-A2']);
    // The kept total, the page's ids, their rows, their orders.
    expect(queries).toHaveLength(4);
  });

  it('when an invoice corrects another, then correct_of is the corrected id and nr, within the same directory only', async () => {
    const page = await repo.list(criteria({ types: ['c'] }));
    expect(page.invoices[0]?.correctOf).toEqual({ id: 101, nr: 'FV/2026/001' });
    expect((await repo.list(criteria({ directory: SOUTH, types: ['c'] }))).invoices[0]?.correctOf).toEqual({ id: 201, nr: 'FV/2026/001' });
    // A reference into another directory never leaks that directory's invoice.
    await db.knex('invoices').where({ id: 202 }).update({ correct_of_id: 101 });
    try {
      expect((await repo.list(criteria({ directory: SOUTH, types: ['c'] }))).invoices[0]?.correctOf).toBeNull();
      expect((await repo.findDetail(SOUTH, 202))?.correctOf).toBeNull();
    } finally {
      await db.knex('invoices').where({ id: 202 }).update({ correct_of_id: 201 });
    }
  });

  it('when an invoice is looked up, then only in its own directory, with address and items', async () => {
    expect(await repo.exists(NORTH, 102)).toBe(true);
    expect(await repo.exists(SOUTH, 102)).toBe(false);
    expect(await repo.exists(NORTH, 999)).toBe(false);
    expect(await repo.findDetail(SOUTH, 102)).toBeNull();
    const detail = await repo.findDetail(NORTH, 102);
    expect(detail?.customerAddress).toBe('alpha Transport\nStreet 1');
    expect(detail?.items).toEqual([
      {
        name: 'Fuel surcharge 100% flat',
        quantity: 1,
        unit: 'pcs',
        unitPriceNet: 203.66,
        taxRate: '23',
        amountNet: 203.66,
        amountTax: 46.84,
        amountGross: 250.5,
      },
      { name: 'Toll_fee \\ A4', quantity: 1, unit: 'pcs', unitPriceNet: 203.66, taxRate: '23', amountNet: 203.66, amountTax: 46.84, amountGross: 250.5 },
    ]);
    expect((await repo.findDetail(NORTH, 103))?.correctOf).toEqual({ id: 101, nr: 'FV/2026/001' });
  });
});
