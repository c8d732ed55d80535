import { describe, expect, it } from 'vitest';
import { isCalendarDate, periodRange } from '@logi/domain';

const utc = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d) / 1000;

describe('periods', () => {
  it('when cur_month, then it runs from the first day of this month to the last, whole days', () => {
    expect(periodRange('cur_month', new Date('2026-11-22T10:00:00Z'), 'UTC')).toEqual({ from: utc(2026, 11, 1), toExclusive: utc(2026, 12, 1) });
  });

  it('when prev_month in January, then it is December of the year before', () => {
    expect(periodRange('prev_month', new Date('2026-01-15T00:00:00Z'), 'UTC')).toEqual({ from: utc(2025, 12, 1), toExclusive: utc(2026, 1, 1) });
  });

  it('when cur_month is February of a leap year, then it has 29 days', () => {
    const range = periodRange('cur_month', new Date('2028-02-10T00:00:00Z'), 'UTC');
    expect(range).toEqual({ from: utc(2028, 2, 1), toExclusive: utc(2028, 3, 1) });
    expect((range.toExclusive! - range.from!) / 86400).toBe(29);
  });

  it('when prev_month is asked on the last day of March, then it is all of February', () => {
    expect(periodRange('prev_month', new Date('2027-03-31T23:59:59Z'), 'UTC')).toEqual({ from: utc(2027, 2, 1), toExclusive: utc(2027, 3, 1) });
  });

  it.each([30, 60, 90])('when last_%i_days, then it is that many days ending today, today included', (days) => {
    const range = periodRange(`last_${days}_days` as 'last_30_days', new Date('2026-11-22T10:00:00Z'), 'UTC');
    expect(range.toExclusive).toBe(utc(2026, 11, 23));
    expect((range.toExclusive! - range.from!) / 86400).toBe(days);
  });

  it('when last_30_days spans the leap day, then the leap day counts as one of the days', () => {
    const range = periodRange('last_30_days', new Date('2028-03-10T12:00:00Z'), 'UTC');
    expect(range.from).toBe(utc(2028, 2, 10));
  });

  it('when the time zone is ahead of UTC, then "today" is the local day', () => {
    // 23:30 UTC on Nov 30 is already Dec 1 in Warsaw.
    const range = periodRange('cur_month', new Date('2026-11-30T23:30:00Z'), 'Europe/Warsaw');
    expect(range.from).toBe(Date.UTC(2026, 10, 30, 23, 0) / 1000);
    expect(range.toExclusive).toBe(Date.UTC(2026, 11, 31, 23, 0) / 1000);
  });

  it('when a month crosses a DST change, then the days still start at local midnight', () => {
    const range = periodRange('cur_month', new Date('2026-03-15T12:00:00Z'), 'Europe/Warsaw');
    expect(range.from).toBe(Date.UTC(2026, 1, 28, 23, 0) / 1000); // CET, UTC+1
    expect(range.toExclusive).toBe(Date.UTC(2026, 2, 31, 22, 0) / 1000); // CEST, UTC+2
  });

  it('when the zone is behind UTC, then a custom day is that local day', () => {
    expect(periodRange('custom', new Date(), 'America/New_York', { from: '2026-07-04', to: '2026-07-04' })).toEqual({
      from: Date.UTC(2026, 6, 4, 4) / 1000,
      toExclusive: Date.UTC(2026, 6, 5, 4) / 1000,
    });
  });

  it('when dates are checked, then only real calendar dates pass', () => {
    expect(isCalendarDate('2028-02-29')).toBe(true);
    expect(isCalendarDate('2026-02-29')).toBe(false);
    expect(isCalendarDate('2026-13-01')).toBe(false);
    expect(isCalendarDate('2026-1-01')).toBe(false);
    expect(isCalendarDate('2026-01-01T00:00')).toBe(false);
  });
});
