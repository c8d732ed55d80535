/** Calendar days and the contract's periods in a zone, through Intl (independent of the service's luxon). */
export const wallFormats = new Map<string, Intl.DateTimeFormat>();
export function wallClock(ms: number, zone: string) {
  let format = wallFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    wallFormats.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  return { y: Number(parts.year), m: Number(parts.month), d: Number(parts.day), h: Number(parts.hour), mi: Number(parts.minute), s: Number(parts.second) };
}
export function utcMs(y: number, m: number, d: number, h = 0, mi = 0, s = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(y, m - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}
export type Day = { y: number; m: number; d: number };
export function addDays(day: Day, n: number): Day {
  const date = new Date(utcMs(day.y, day.m, day.d) + n * 86_400_000);
  return { y: date.getUTCFullYear(), m: date.getUTCMonth() + 1, d: date.getUTCDate() };
}
/** Unix seconds of the first instant of a calendar day in a zone. */
export function startOfDay(day: Day, zone: string): number {
  const wall = utcMs(day.y, day.m, day.d);
  const offset = (t: number) => {
    const w = wallClock(t, zone);
    return utcMs(w.y, w.m, w.d, w.h, w.mi, w.s) - t;
  };
  const instant = wall - offset(wall - offset(wall));
  const check = wallClock(instant, zone);
  if (check.h !== 0 || check.mi !== 0 || check.s !== 0 || check.d !== day.d) throw new Error(`no midnight on ${JSON.stringify(day)} in ${zone}`);
  return instant / 1000;
}
export const parseDay = (iso: string): Day => ({ y: Number(iso.slice(0, 4)), m: Number(iso.slice(5, 7)), d: Number(iso.slice(8, 10)) });

/** The contract's periods: closed ranges of whole days in the zone, as [from, toExclusive) in Unix seconds. */
export function periodRange(period: string, nowMs: number, zone: string, from?: string, to?: string): { from: number | null; to: number | null } {
  const w = wallClock(nowMs, zone);
  const today = { y: w.y, m: w.m, d: w.d };
  const month = (offset: number): Day => {
    const index = w.y * 12 + (w.m - 1) + offset;
    return { y: Math.floor(index / 12), m: (index % 12) + 1, d: 1 };
  };
  switch (period) {
    case 'cur_month':
      return { from: startOfDay(month(0), zone), to: startOfDay(month(1), zone) };
    case 'prev_month':
      return { from: startOfDay(month(-1), zone), to: startOfDay(month(0), zone) };
    case 'custom':
      return { from: from ? startOfDay(parseDay(from), zone) : null, to: to ? startOfDay(addDays(parseDay(to), 1), zone) : null };
    default: {
      const days = Number(period.split('_')[1]);
      return { from: startOfDay(addDays(today, -(days - 1)), zone), to: startOfDay(addDays(today, 1), zone) };
    }
  }
}
