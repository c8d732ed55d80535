import { DateTime } from 'luxon';
import type { TimeRange } from '../invoice-criteria.js';

export const PERIODS = ['cur_month', 'prev_month', 'last_30_days', 'last_60_days', 'last_90_days', 'custom'] as const;
export type Period = (typeof PERIODS)[number];

/** A calendar day, `YYYY-MM-DD`. */
export type CalendarDate = string;

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar date in `YYYY-MM-DD` form (2026-02-29 is not). */
export function isCalendarDate(value: string): boolean {
  const match = DATE_PATTERN.exec(value);
  if (!match) return false;
  return DateTime.fromObject({ year: +match[1]!, month: +match[2]!, day: +match[3]! }, { zone: 'UTC' }).isValid;
}

function startOfDay(date: CalendarDate, zone: string): DateTime {
  return DateTime.fromISO(date, { zone }).startOf('day');
}

/**
 * Closed ranges of whole days, read in `zone`, as half-open ranges of Unix
 * seconds: the start of the first day up to the start of the day after the last.
 */
export function periodRange(period: Period, now: Date, zone: string, custom: { from?: CalendarDate; to?: CalendarDate } = {}): TimeRange {
  const today = DateTime.fromJSDate(now, { zone }).startOf('day');
  const seconds = (dt: DateTime) => Math.floor(dt.toSeconds());
  switch (period) {
    case 'cur_month': {
      const start = today.startOf('month');
      return { from: seconds(start), toExclusive: seconds(start.plus({ months: 1 })) };
    }
    case 'prev_month': {
      const start = today.startOf('month').minus({ months: 1 });
      return { from: seconds(start), toExclusive: seconds(today.startOf('month')) };
    }
    case 'last_30_days':
    case 'last_60_days':
    case 'last_90_days': {
      const days = Number(period.split('_')[1]);
      return { from: seconds(today.minus({ days: days - 1 })), toExclusive: seconds(today.plus({ days: 1 })) };
    }
    case 'custom':
      return {
        from: custom.from ? seconds(startOfDay(custom.from, zone)) : null,
        toExclusive: custom.to ? seconds(startOfDay(custom.to, zone).plus({ days: 1 })) : null,
      };
  }
}

/**
 * The inclusive calendar days a half-open range covers, read in `zone`: what
 * a period meant at the moment it was applied (null for an open end).
 */
export function rangeDays(range: TimeRange, zone: string): { from: CalendarDate | null; to: CalendarDate | null } {
  const day = (seconds: number) => DateTime.fromSeconds(seconds, { zone }).toISODate()!;
  return {
    from: range.from === null ? null : day(range.from),
    to: range.toExclusive === null ? null : day(DateTime.fromSeconds(range.toExclusive, { zone }).minus({ days: 1 }).toSeconds()),
  };
}
