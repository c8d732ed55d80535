import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ APP_TIMEZONE: 'UTC' }, { now: new Date('2026-11-22T12:00:00Z') });
});
afterAll(async () => {
  await api?.stop();
});

async function list(query: string, as: 'baltic' | 'alpine' = 'baltic') {
  const response = await api.call(`/invoices${query}`, { as });
  expect(response.status).toBe(200);
  return (await envelopeOf(response)).data as { invoices: Array<Record<string, any>>; pagination: Record<string, number> };
}
const ids = async (query: string) => (await list(query)).invoices.map((i) => i.id);

describe('GET /invoices', () => {
  it("when nothing is asked, then all of the client's invoices, newest issue date first, ties by id", async () => {
    const data = await list('');
    expect(data.invoices.map((i) => i.id)).toEqual([9009, 9002, 9001, 9006, 9005, 9003, 9004, 9007, 9008]);
    expect(data.pagination).toEqual({ page: 1, per_page: 250, total: 9, total_pages: 1 });
  });

  it('when an invoice is listed, then it has exactly the documented fields', async () => {
    const invoice = (await list('?types=c')).invoices[0]!;
    expect(invoice).toEqual({
      id: 9005,
      nr: 'KOR/11/2026/0001',
      type: 'c',
      status: 'issued',
      branch_id: 1,
      issue_date: Date.UTC(2026, 10, 2) / 1000,
      service_date: Date.UTC(2026, 10, 1) / 1000,
      payment_term: Date.UTC(2026, 10, 16) / 1000,
      payment_date: null,
      customer_name: 'Rheinfracht GmbH',
      customer_vat: 'DE811111111',
      customer_country: 'de',
      currency: 'EUR',
      amount_net: -81.3,
      amount_tax: -18.7,
      amount_gross: -100,
      paid: 0,
      left_to_pay: -100,
      orders: [{ type: 'FTL', nr: 'BH/ORD/9005', cmr: 'CMR 9005', tasks: [{ step: 1 }], files: [], contacts: [] }],
      correct_of: { id: 9001, nr: 'FV/11/2026/0007' },
      added_time: Date.UTC(2026, 10, 2, 1) / 1000,
    });
  });

  it('when another client lists, then it sees only its own invoices', async () => {
    expect((await list('', 'alpine')).invoices.map((i) => i.id)).toEqual([9101]);
  });

  it.each([
    ['?types=c', [9005]],
    ['?types=p,%20c', [9006, 9005]],
    ['?statuses=paid', [9002, 9007]],
    ['?statuses=semipaid,overdue', [9003, 9004]],
    ['?branch_ids=2', [9003, 9004]],
    ['?branch_ids=2,3', [9006, 9003, 9004]],
    ['?customer_vats=pl1234567890', [9002]],
    ['?customer_vats=PL123', []],
    ['?customer_vats=cz12345678,%20RO123456', [9006, 9007]],
    [`?customer_name=${encodeURIComponent('ŁÓDŹ')}`, [9002]],
    ['?customer_name=rheinFRACHT', [9001, 9005]],
    ['?customer_name=%25', [9006]],
    ['?customer_name=_', [9006]],
    ['?customer_country=CZ', [9006]],
    ['?search=fv/10', [9003, 9004]],
    ['?search=BH/2026/0412', [9001]],
    [`?search=${encodeURIComponent('surcharge 100%_off \\')}`, [9006]],
    ['?search=%25', [9006]],
    ['?search=%5C', [9006]],
    ['?search=nothing-like-this', []],
  ])('when filtered by %s, then %j', async (query, expected) => {
    expect(await ids(query)).toEqual(expected);
  });

  it.each([
    ['?period=cur_month', [9009, 9002, 9001, 9006, 9005]],
    ['?period=prev_month', [9003, 9004]],
    ['?period=last_30_days', [9009, 9002, 9001, 9006, 9005, 9003]],
    ['?period=last_90_days', [9009, 9002, 9001, 9006, 9005, 9003, 9004, 9007]],
    ['?period=prev_month&date_field=payment_date', [9004]],
    ['?period=cur_month&date_field=added_date', [9009, 9002, 9001, 9006, 9005, 9008]],
    ['?period=custom&date_from=2026-10-31&date_to=2026-11-02', [9005, 9003]],
    ['?period=custom&date_to=2026-09-15', [9007, 9008]],
    ['?date_from=2026-11-01&date_to=2026-11-30', [9009, 9002, 9001, 9006, 9005, 9003, 9004, 9007, 9008]],
  ])('when the period is %s, then %j', async (query, expected) => {
    expect(await ids(query)).toEqual(expected);
  });

  it.each([
    ['?sort_by=amount_gross&sort_dir=asc', [9005, 9004, 9008, 9002, 9003, 9001, 9009, 9006, 9007]],
    ['?sort_by=amount_gross', [9007, 9006, 9009, 9001, 9003, 9002, 9008, 9004, 9005]],
    ['?sort_by=payment_date&sort_dir=asc', [9001, 9003, 9005, 9006, 9008, 9009, 9007, 9004, 9002]],
    ['?sort_by=payment_date&sort_dir=desc', [9002, 9004, 9007, 9009, 9008, 9006, 9005, 9003, 9001]],
    ['?sort_by=nr&sort_dir=asc', [9008, 9007, 9003, 9004, 9001, 9002, 9009, 9005, 9006]],
  ])('when sorted by %s, then %j', async (query, expected) => {
    expect(await ids(query)).toEqual(expected);
  });

  it('when sorted by customer name, then text sorts case-insensitively', async () => {
    const names = (await list('?sort_by=customer_name&sort_dir=asc')).invoices.map((i) => i.customer_name as string);
    const ascii = names.filter((n) => /^[A-Za-z]/.test(n));
    expect(ascii).toEqual([
      'alpha transport',
      'Beta 100% Freight_Co',
      'Delta Freight',
      'Gamma İstanbul Lojistik',
      'Rheinfracht GmbH',
      'Rheinfracht GmbH',
      'Zeta Spedition',
    ]);
  });

  it('when pages are walked, then they neither overlap nor skip, and a page past the end is empty', async () => {
    const all = await ids('?sort_by=amount_gross');
    const pages = await Promise.all([1, 2, 3].map((page) => list(`?sort_by=amount_gross&per_page=4&page=${page}`)));
    expect(pages.flatMap((p) => p.invoices.map((i) => i.id))).toEqual(all);
    expect(pages[2]!.pagination).toEqual({ page: 3, per_page: 4, total: 9, total_pages: 3 });
    const past = await list('?per_page=4&page=4');
    expect(past).toEqual({ invoices: [], pagination: { page: 4, per_page: 4, total: 9, total_pages: 3 } });
    const far = await list('?page=9007199254740991');
    expect(far.invoices).toEqual([]);
  });

  it('when nothing matches, then total_pages is 0', async () => {
    expect((await list('?types=c&statuses=paid')).pagination).toEqual({ page: 1, per_page: 250, total: 0, total_pages: 0 });
  });

  it.each([
    ['?page=0', 'page'],
    ['?page=1.5', 'page'],
    ['?per_page=501', 'per_page'],
    ['?per_page=0', 'per_page'],
    ['?types=s,,c', 'types'],
    ['?types=x', 'types'],
    ['?types[]=s', 'types'],
    ['?page=1&page=2', 'page'],
    ['?page[x]=1', 'page'],
    ['?statuses=PAID', 'statuses'],
    ['?branch_ids=1,a', 'branch_ids'],
    ['?customer_country=deu', 'customer_country'],
    ['?sort_by=id', 'sort_by'],
    ['?sort_dir=up', 'sort_dir'],
    ['?period=yesterday', 'period'],
    ['?period=custom', 'date_from'],
    ['?period=custom&date_from=2026-11-02&date_to=2026-11-01', 'date_from'],
    ['?date_from=2026-02-29', 'date_from'],
    ['?date_to=2026-13-01', 'date_to'],
    ['?period=cur_month&date_field=created_at', 'date_field'],
  ])('when the query is %s, then 422 names %s', async (query, field) => {
    const response = await api.call(`/invoices${query}`);
    expect(response.status).toBe(422);
    const body = await envelopeOf(response);
    expect(body.message).toBe('The given data was invalid.');
    expect(body.data).toBeNull();
    expect(body.errors).toHaveProperty([field]);
  });

  it('when parameters are empty or unknown, then they are ignored', async () => {
    expect(await ids('?page=&types=&foo=bar&sort_by=')).toEqual([9009, 9002, 9001, 9006, 9005, 9003, 9004, 9007, 9008]);
  });
});

describe('GET /invoices periods in APP_TIMEZONE', () => {
  // 02:00 UTC on 1 November is still 31 October, 22:00, in New York (EDT, UTC-4).
  // Issue dates are stored as instants at UTC midnight: 9004's 2026-10-01T00:00Z is
  // 30 September, 20:00, in New York, so the zone moves it across the month edge.
  let zoned: TestApi;
  beforeAll(async () => {
    zoned = await startTestApi({ APP_TIMEZONE: 'America/New_York' }, { now: new Date('2026-11-01T02:00:00Z'), label: 'invoices-tz', worker: false });
  });
  afterAll(async () => {
    await zoned?.stop();
  });

  const zonedIds = async (query: string) => {
    const response = await zoned.call(`/invoices${query}`);
    expect(response.status).toBe(200);
    return ((await envelopeOf(response)).data as { invoices: Array<{ id: number }> }).invoices.map((i) => i.id);
  };

  it.each([
    // In UTC it is already November: [9009, 9002, 9001, 9006, 9005].
    ['?period=cur_month', [9003]],
    // In UTC the previous month is October: [9003, 9004].
    ['?period=prev_month', [9004, 9007]],
    // In UTC 1 October holds 9004.
    ['?period=custom&date_from=2026-10-01&date_to=2026-10-01', []],
    ['?period=custom&date_from=2026-09-30&date_to=2026-09-30', [9004]],
  ])('when APP_TIMEZONE is America/New_York and the period is %s, then days and months are read in New York time: %j', async (query, expected) => {
    expect(await zonedIds(query)).toEqual(expected);
  });
});

describe('GET /invoices: the date range a period applied', () => {
  const paginationOf = async (target: TestApi, query: string) => {
    const response = await target.call(`/invoices${query}`);
    expect(response.status).toBe(200);
    return ((await envelopeOf(response)).data as { pagination: Record<string, unknown> }).pagination;
  };

  it.each([
    // The clock is 2026-11-22T12:00Z and APP_TIMEZONE is UTC.
    ['?period=last_30_days', { date_field: 'issue_date', date_from: '2026-10-24', date_to: '2026-11-22', timezone: 'UTC' }],
    ['?period=cur_month&date_field=payment_date', { date_field: 'payment_date', date_from: '2026-11-01', date_to: '2026-11-30', timezone: 'UTC' }],
    ['?period=prev_month&date_field=added_date', { date_field: 'added_date', date_from: '2026-10-01', date_to: '2026-10-31', timezone: 'UTC' }],
    ['?period=custom&date_from=2026-02-01', { date_field: 'issue_date', date_from: '2026-02-01', date_to: null, timezone: 'UTC' }],
    ['?period=custom&date_to=2026-02-28&date_field=service_date', { date_field: 'service_date', date_from: null, date_to: '2026-02-28', timezone: 'UTC' }],
  ])('when the query is %s, then pagination says which days it meant: %j', async (query, expected) => {
    const pagination = await paginationOf(api, query);
    expect(pagination).toMatchObject(expected);
    expect(Object.keys(pagination).sort()).toEqual(['date_field', 'date_from', 'date_to', 'page', 'per_page', 'timezone', 'total', 'total_pages']);
  });

  it('when no period is given (or date_field alone), then pagination holds only the contract fields', async () => {
    for (const query of ['', '?date_field=payment_date', '?date_from=2026-01-01']) {
      expect(Object.keys(await paginationOf(api, query)).sort()).toEqual(['page', 'per_page', 'total', 'total_pages']);
    }
  });

  it('when APP_TIMEZONE is America/New_York, then the days are New York days', async () => {
    const zoned = await startTestApi(
      { APP_TIMEZONE: 'America/New_York' },
      { now: new Date('2026-11-01T02:00:00Z'), label: 'invoices-range-tz', worker: false },
    );
    try {
      expect(await paginationOf(zoned, '?period=cur_month')).toMatchObject({ date_from: '2026-10-01', date_to: '2026-10-31', timezone: 'America/New_York' });
      expect(await paginationOf(zoned, '?period=last_60_days')).toMatchObject({ date_from: '2026-09-02', date_to: '2026-10-31' });
    } finally {
      await zoned.stop();
    }
  });
});

describe('GET /invoices: conditional requests (weak ETag)', () => {
  it('when the same list is asked again with its ETag, then 304 with no body, until the data changes', async () => {
    const first = await api.call('/invoices?per_page=3');
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    const firstBody = await first.text();

    const again = await api.call('/invoices?per_page=3', { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('x-ratelimit-limit')).not.toBeNull();

    for (const header of [`"other", ${etag}`, etag.replace(/^W\//, ''), '*']) {
      expect((await api.call('/invoices?per_page=3', { headers: { 'If-None-Match': header } })).status).toBe(304);
    }
    expect((await api.call('/invoices?per_page=3', { headers: { 'If-None-Match': 'W/"something-else"' } })).status).toBe(200);
    const other = await api.call('/invoices?per_page=4', { headers: { 'If-None-Match': etag } });
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).not.toBe(etag);

    // A change to a listed invoice changes the bytes, so the old tag no longer matches.
    const listed = (JSON.parse(firstBody) as { data: { invoices: Array<{ id: number; customer_name: string }> } }).data.invoices[0]!;
    await api
      .knex('invoices')
      .where({ id: listed.id })
      .update({ customer_name: `${listed.customer_name} (renamed)` });
    try {
      const changed = await api.call('/invoices?per_page=3', { headers: { 'If-None-Match': etag } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(etag);
    } finally {
      await api.knex('invoices').where({ id: listed.id }).update({ customer_name: listed.customer_name });
    }
    expect((await api.call('/invoices?per_page=3', { headers: { 'If-None-Match': etag } })).status).toBe(304);
  });

  it('when the query is invalid or the credentials wrong, then those answers come first, whatever If-None-Match says', async () => {
    expect((await api.call('/invoices?per_page=0', { headers: { 'If-None-Match': '*' } })).status).toBe(422);
    expect((await api.call('/invoices', { as: null, headers: { 'If-None-Match': '*' } })).status).toBe(401);
  });
});
