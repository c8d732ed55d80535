import { describe, expect, it } from 'vitest';
import { parseListInvoicesQuery, ValidationError, type InvoiceCriteria } from '@logi/domain';

const context = { directory: 'baltic', now: new Date('2026-11-22T10:00:00Z'), timeZone: 'UTC' };
const parse = (qs: string): InvoiceCriteria => parseListInvoicesQuery(new URLSearchParams(qs), context);

function errorsOf(qs: string): Record<string, string[]> {
  try {
    parse(qs);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toBe('The given data was invalid.');
    return (error as ValidationError).errors;
  }
  throw new Error(`expected "${qs}" to be invalid`);
}

describe('invoice list query', () => {
  it('when nothing is sent, then the defaults apply', () => {
    expect(parse('')).toEqual({
      directory: 'baltic',
      page: 1,
      perPage: 250,
      dateFilter: null,
      types: null,
      statuses: null,
      branchIds: null,
      customerVats: null,
      customerName: null,
      customerCountry: null,
      search: null,
      sortBy: 'issue_date',
      sortDir: 'desc',
    });
  });

  it('when page and per_page are whole numbers in range, then they are used', () => {
    expect(parse('page=3&per_page=500')).toMatchObject({ page: 3, perPage: 500 });
    expect(parse('per_page=1')).toMatchObject({ perPage: 1 });
  });

  it.each(['page=0', 'page=-1', 'page=1.5', 'page=abc', 'page=1e3', 'page= 1'])('when %s, then page is invalid', (qs) => {
    expect(errorsOf(qs)).toHaveProperty('page');
  });

  it.each(['per_page=0', 'per_page=501', 'per_page=2.0', 'per_page=x'])('when %s, then per_page is invalid', (qs) => {
    expect(errorsOf(qs)).toHaveProperty('per_page');
  });

  it('when a page beyond the safe integer range is asked, then it is invalid rather than rounded', () => {
    expect(errorsOf('page=99999999999999999999')).toHaveProperty('page');
  });

  it('when lists have spaces around items, then they are trimmed and de-duplicated', () => {
    expect(parse('types= s , c,s&statuses=paid, overdue&branch_ids=2, 7')).toMatchObject({
      types: ['s', 'c'],
      statuses: ['paid', 'overdue'],
      branchIds: [2, 7],
    });
  });

  it.each([
    ['types=s,,c', 'types'],
    ['types=s,', 'types'],
    ['types=S', 'types'],
    ['types=x', 'types'],
    ['statuses=paid,unknown', 'statuses'],
    ['statuses=PAID', 'statuses'],
    ['branch_ids=1,a', 'branch_ids'],
    ['branch_ids=1.5', 'branch_ids'],
    ['customer_vats=DE1,,PL2', 'customer_vats'],
    ['customer_country=deu', 'customer_country'],
    ['customer_country=d1', 'customer_country'],
    ['sort_by=amount', 'sort_by'],
    ['sort_by=ISSUE_DATE', 'sort_by'],
    ['sort_dir=ASC', 'sort_dir'],
    ['period=this_month', 'period'],
    ['period=cur_month&date_field=created', 'date_field'],
  ])('when %s, then %s is named in errors', (qs, field) => {
    expect(errorsOf(qs)).toHaveProperty(field);
  });

  it('when a parameter is sent twice or in array or object form, then it is invalid', () => {
    expect(errorsOf('page=1&page=2')).toHaveProperty('page');
    expect(errorsOf('types[]=s')).toHaveProperty('types');
    expect(errorsOf('page[x]=1')).toHaveProperty('page');
    expect(errorsOf('sort_by[0]=nr')).toHaveProperty('sort_by');
  });

  it('when a parameter is empty, then it counts as absent', () => {
    expect(parse('page=&types=&search=&customer_country=')).toMatchObject({ page: 1, types: null, search: null, customerCountry: null });
  });

  it('when unknown parameters are sent, then they are ignored', () => {
    expect(parse('foo=bar&foo=baz&x[]=1')).toMatchObject({ page: 1 });
  });

  it('when country and VATs are sent, then the country is lower-cased and VATs kept as sent', () => {
    expect(parse('customer_country=DE&customer_vats=de811111111, PL5860000000')).toMatchObject({
      customerCountry: 'de',
      customerVats: ['de811111111', 'PL5860000000'],
    });
  });

  it('when text criteria hold wildcards, then they are passed on literally and trimmed', () => {
    expect(parse('search=%20100%25_off%5C%20&customer_name=%25')).toMatchObject({ search: '100%_off\\', customerName: '%' });
  });

  it('when sort is given, then it is used', () => {
    expect(parse('sort_by=customer_name&sort_dir=asc')).toMatchObject({ sortBy: 'customer_name', sortDir: 'asc' });
  });

  it('when a period is given without date_field, then issue_date is filtered', () => {
    expect(parse('period=cur_month').dateFilter?.field).toBe('issue_date');
  });

  it('when date_field is given without a period, then no date filter applies', () => {
    expect(parse('date_field=payment_date').dateFilter).toBeNull();
  });

  it('when date_from is sent without period=custom, then it is validated but not used', () => {
    expect(parse('date_from=2026-01-01').dateFilter).toBeNull();
    expect(parse('period=cur_month&date_from=2020-01-01').dateFilter?.range.from).toBe(Date.UTC(2026, 10, 1) / 1000);
    expect(errorsOf('date_from=2026-02-30')).toHaveProperty('date_from');
    expect(errorsOf('date_to=26-01-01')).toHaveProperty('date_to');
  });

  it('when period is custom with no dates, then date_from is required', () => {
    expect(errorsOf('period=custom')).toHaveProperty('date_from');
  });

  it('when date_from is after date_to, then it is invalid', () => {
    expect(errorsOf('period=custom&date_from=2026-03-02&date_to=2026-03-01')).toHaveProperty('date_from');
  });

  it('when only one end of a custom period is given, then the other is open', () => {
    expect(parse('period=custom&date_from=2026-03-01').dateFilter?.range).toEqual({ from: Date.UTC(2026, 2, 1) / 1000, toExclusive: null });
    expect(parse('period=custom&date_to=2026-03-01').dateFilter?.range).toEqual({ from: null, toExclusive: Date.UTC(2026, 2, 2) / 1000 });
  });

  it('when added_date is the date field, then it is passed on as added_date', () => {
    expect(parse('period=last_30_days&date_field=added_date').dateFilter?.field).toBe('added_date');
  });

  it('when text is longer than 255 characters, then it is invalid', () => {
    expect(errorsOf(`search=${'a'.repeat(256)}`)).toHaveProperty('search');
  });

  it('when text is 255 characters outside the BMP (510 UTF-16 units), then it is valid: characters are counted as the document counts them, by code point', () => {
    const emoji = encodeURIComponent('😀'.repeat(255));
    expect(parse(`search=${emoji}&customer_name=${emoji}`)).toMatchObject({ search: '😀'.repeat(255), customerName: '😀'.repeat(255) });
    expect(parse(`customer_vats=${encodeURIComponent('𝔘'.repeat(64))}`)).toMatchObject({ customerVats: ['𝔘'.repeat(64)] });
    expect(errorsOf(`search=${encodeURIComponent('😀'.repeat(256))}`)).toHaveProperty('search');
    expect(errorsOf(`customer_vats=${encodeURIComponent('𝔘'.repeat(65))}`)).toHaveProperty('customer_vats');
  });
});
