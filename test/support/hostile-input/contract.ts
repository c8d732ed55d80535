/**
 * What the contract says of the hostile-input test's requests: its vocabulary, the
 * envelope, query strings as a client builds them, and the oracle that calls a
 * query valid or invalid (test/api/hostile-input.property.test.ts).
 */
import { type Tenant, type TestApi } from '../api-harness.js';
import { utcMs } from './calendar.js';

export const MAX_QUERY_BYTES = 8 * 1024;
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const UPLOAD_MAX_FILES = 2;
export const MAX_BODY_BYTES = UPLOAD_MAX_FILES * MAX_FILE_BYTES + 1024 * 1024;
export const PERIODS = ['cur_month', 'prev_month', 'last_30_days', 'last_60_days', 'last_90_days', 'custom'] as const;
export const DATE_FIELDS = ['added_date', 'issue_date', 'service_date', 'payment_term', 'payment_date'] as const;
export const TYPES = ['s', 'c', 'p'] as const;
export const STATUSES = ['issued', 'paid', 'semipaid', 'overdue'] as const;
export const SORT_FIELDS = [
  'issue_date',
  'service_date',
  'payment_term',
  'payment_date',
  'nr',
  'amount_gross',
  'amount_net',
  'amount_tax',
  'customer_name',
  'added_time',
] as const;
export const SORT_DIRS = ['asc', 'desc'] as const;
export const LIST_PARAMS = [
  'page',
  'per_page',
  'period',
  'date_field',
  'date_from',
  'date_to',
  'types',
  'statuses',
  'branch_ids',
  'customer_vats',
  'customer_name',
  'customer_country',
  'search',
  'sort_by',
  'sort_dir',
] as const;
export type ListParam = (typeof LIST_PARAMS)[number];
export const ENUMS: Partial<Record<ListParam, readonly string[]>> = { period: PERIODS, date_field: DATE_FIELDS, sort_by: SORT_FIELDS, sort_dir: SORT_DIRS };
export const HOSTILE_NOW = new Date('2026-11-22T12:00:00Z');
export const HOSTILE_ZONE = 'Europe/Warsaw';
/** Zones without a DST change at midnight, on both sides of UTC and off the hour. */
export const REFERENCE_ZONES = ['America/New_York', 'Asia/Kathmandu', 'Pacific/Kiritimati'] as const;

// ---------------------------------------------------------------- answers and envelopes

export interface Answer {
  status: number;
  text: string;
}
export interface Envelope {
  status: number;
  message: string;
  data: any;
  errors?: Record<string, string[]>;
}

export const show = (answer: Answer) => `HTTP ${answer.status} ${answer.text.slice(0, 600)}`;

/** The contract's envelope: exactly status/message/data (+ errors on a 422 only), status equal to HTTP's. */
export function envelopeOf(answer: Answer, context: string): Envelope {
  const fail = (why: string) => new Error(`${context}: ${why}: ${show(answer)}`);
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    throw fail('the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw fail('not an object');
  const b = body as Record<string, unknown>;
  const keys = Object.keys(b).sort().join();
  if (keys !== 'data,message,status' && keys !== 'data,errors,message,status') throw fail(`not an envelope (keys ${keys})`);
  if (b.status !== answer.status) throw fail('envelope status differs from the HTTP status');
  if (typeof b.message !== 'string' || b.message === '') throw fail('message is not a non-empty string');
  if ('errors' in b) {
    if (answer.status !== 422) throw fail('errors outside a 422');
    const errors = b.errors;
    if (typeof errors !== 'object' || errors === null || Array.isArray(errors) || Object.keys(errors).length === 0) throw fail('errors names no field');
    for (const [field, messages] of Object.entries(errors)) {
      if (field === '' || !Array.isArray(messages) || messages.length === 0 || messages.some((m) => typeof m !== 'string' || m === '')) {
        throw fail(`errors.${field} is not a list of messages`);
      }
    }
  }
  return b as unknown as Envelope;
}

export function expectStatus(answer: Answer, allowed: readonly number[], context: string): void {
  if (!allowed.includes(answer.status)) throw new Error(`${context}: status ${answer.status} is not one of ${allowed.join('/')}: ${show(answer)}`);
}

export async function get(api: TestApi, pathAndQuery: string, as: Tenant = 'baltic'): Promise<Answer> {
  const response = await api.call(pathAndQuery, { as });
  return { status: response.status, text: await response.text() };
}

// ---------------------------------------------------------------- query strings

export type Style = 'strict' | 'plus' | 'loose' | 'all';
/** What a generated parameter sends: text to encode, bytes sent as they are, no `=`, or a filler up to a size. */
export type Value = { text: string } | { raw: string } | { bare: true } | { fill: string; bytes: number };
export interface Pair {
  name: string;
  /** Sent as is after the encoded name: `[]`, `[x]`, `%5B%5D`, ... */
  suffix: string;
  encodeName: boolean;
  value: Value;
}

export const LOOSE_SAFE = new Set([...',/:@!*()$;']);

/** Percent-encodes UTF-8 bytes (lone surrogates become U+FFFD, as any client would send them). */
export function encode(text: string, style: Style): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    if (style !== 'all' && /[A-Za-z0-9\-._~]/.test(char)) out += char;
    else if (style === 'plus' && char === ' ') out += '+';
    else if (style === 'loose' && LOOSE_SAFE.has(char)) out += char;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Joins the pairs (and junk segments) into a query string of at most `budget` bytes; fillers take what is left. */
export function buildQuery(pairs: Pair[], style: Style, junk: string[] = [], budget = MAX_QUERY_BYTES): string {
  const heads = pairs.map((p) => {
    const name = encode(p.name, p.encodeName ? 'all' : style) + p.suffix;
    if ('bare' in p.value) return name;
    if ('raw' in p.value) return `${name}=${p.value.raw}`;
    if ('text' in p.value) return `${name}=${encode(p.value.text, style)}`;
    return `${name}=`;
  });
  const segments = [...heads, ...junk];
  let used = segments.reduce((n, s) => n + s.length, 0) + Math.max(0, segments.length - 1);
  pairs.forEach((p, i) => {
    if (!('fill' in p.value)) return;
    const unit = encode(p.value.fill, style);
    const room = Math.min(p.value.bytes, budget - used);
    const times = unit.length === 0 ? 0 : Math.max(0, Math.floor(room / unit.length));
    segments[i] += unit.repeat(times);
    used += unit.length * times;
  });
  const query = segments.join('&');
  if (Buffer.byteLength(query) > budget) throw new Error(`generator bug: query of ${Buffer.byteLength(query)} bytes`);
  return query;
}

// ---------------------------------------------------------------- what the contract says of a query (the oracle)

export type Verdict = 'valid' | 'invalid' | 'either';
export interface QueryVerdict {
  /** Known parameters with a single non-empty value, decoded. */
  values: Partial<Record<string, string>>;
  /** Fields the contract calls invalid: the answer must be 422 naming them. */
  invalid: Set<string>;
  /** Fields the contract leaves open (a padded number, a non-BMP character at the length limit...). */
  either: Set<string>;
}

export const SPACE_TRIM = (s: string) => s.replace(/^ +|(?<! ) +$/g, '');
export const codePoints = (s: string) => [...s].length;
export const worst = (a: Verdict, b: Verdict): Verdict =>
  a === 'invalid' || b === 'invalid' ? 'invalid' : a === 'either' || b === 'either' ? 'either' : 'valid';

/** Reads the pairs as the WHATWG form decoding gives them; a name in array/object form or sent twice is invalid. */
export function readQuery(query: string, known: readonly string[]): QueryVerdict {
  const seen = new Map<string, string[]>();
  const verdict: QueryVerdict = { values: {}, invalid: new Set(), either: new Set() };
  for (const [rawKey, value] of new URLSearchParams(query)) {
    const bracket = rawKey.indexOf('[');
    const key = bracket === -1 ? rawKey : rawKey.slice(0, bracket);
    if (!known.includes(key)) continue;
    if (bracket !== -1) (/^(\[[^\]]*\])+$/.test(rawKey.slice(bracket)) ? verdict.invalid : verdict.either).add(key);
    seen.set(key, [...(seen.get(key) ?? []), value]);
  }
  for (const [key, list] of seen) {
    if (list.length > 1) verdict.invalid.add(key);
    else if (!verdict.invalid.has(key) && !verdict.either.has(key) && list[0] !== '') verdict.values[key] = list[0]!;
  }
  return verdict;
}

export function wholeNumber(value: string, min: number, max: number): Verdict {
  if (/^[0-9]+$/.test(value)) {
    const n = Number(value);
    if (n < min || n > max) return n > Number.MAX_SAFE_INTEGER && max === Number.MAX_SAFE_INTEGER ? 'either' : 'invalid';
    return n > Number.MAX_SAFE_INTEGER ? 'either' : 'valid';
  }
  // Whole numbers written otherwise (+1, 1e3, 2.0, padded): the contract does not say.
  const n = Number(value.trim());
  if (value.trim() !== '' && Number.isInteger(n) && n >= min && n <= max && /^[\s+0-9.eE]+$/.test(value)) return 'either';
  return 'invalid';
}

export function enumMember(value: string, members: readonly string[]): Verdict {
  if (members.includes(value)) return 'valid';
  return members.includes(value.trim()) ? 'either' : 'invalid';
}

export function calendarDate(value: string): Verdict {
  const match = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(value);
  if (!match) return /^\s*[0-9]{4}-[0-9]{2}-[0-9]{2}\s*$/.test(value) && calendarDate(value.trim()) === 'valid' ? 'either' : 'invalid';
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (y === 0) return 'either';
  const date = new Date(utcMs(y, m, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d ? 'valid' : 'invalid';
}

export function listOf(value: string, item: (text: string) => Verdict): Verdict {
  return value.split(',').reduce<Verdict>((acc, raw) => {
    if (raw.trim() === '') return 'invalid';
    const strict = item(SPACE_TRIM(raw));
    return worst(acc, strict === 'valid' ? 'valid' : item(raw.trim()) === 'valid' ? 'either' : strict);
  }, 'valid');
}

/** Text up to `max` characters; the contract does not say whether a non-BMP character counts once or twice. */
export function textUpTo(value: string, max: number): Verdict {
  if (value.length <= max) return 'valid';
  return codePoints(value) <= max ? 'either' : 'invalid';
}

export function listParamVerdict(param: string, value: string): Verdict {
  switch (param) {
    case 'page':
      return wholeNumber(value, 1, Number.MAX_SAFE_INTEGER);
    case 'per_page':
      return wholeNumber(value, 1, 500);
    case 'date_from':
    case 'date_to':
      return calendarDate(value);
    case 'types':
      return listOf(value, (t) => enumMember(t, TYPES));
    case 'statuses':
      return listOf(value, (t) => enumMember(t, STATUSES));
    case 'branch_ids':
      return listOf(value, (t) => (/^-[0-9]+$/.test(t) ? 'either' : wholeNumber(t, 0, Number.MAX_SAFE_INTEGER)));
    case 'customer_vats':
      return listOf(value, (t) => textUpTo(t.trim(), 64));
    case 'customer_name':
    case 'search':
      return textUpTo(value.trim(), 255);
    case 'customer_country':
      if (/^[A-Za-z]{2}$/.test(value)) return 'valid';
      return /^\p{L}{2}$/u.test(value.trim()) ? 'either' : 'invalid';
    default:
      return enumMember(value, ENUMS[param as ListParam]!);
  }
}

/** The verdict on a GET /invoices query, the cross-field rules of `custom` included. */
export function judgeListQuery(query: string): QueryVerdict & { customFields: Set<string> } {
  const verdict = readQuery(query, LIST_PARAMS);
  for (const [param, value] of Object.entries(verdict.values)) {
    const v = listParamVerdict(param, value!);
    if (v !== 'valid') verdict[v].add(param);
    if (v !== 'valid') delete verdict.values[param];
  }
  if (verdict.values.customer_name?.trim() === '') delete verdict.values.customer_name;
  if (verdict.values.search?.trim() === '') delete verdict.values.search;
  // Checked once everything else is valid; the contract names no field for them, so any of the three may be named.
  const customFields = new Set<string>();
  const { period, date_from: from, date_to: to } = verdict.values;
  const datesOpen = verdict.either.has('date_from') || verdict.either.has('date_to');
  if (period === 'custom' && !from && !to && !datesOpen) ['date_from', 'date_to', 'period'].forEach((f) => customFields.add(f));
  if (from && to && from > to) {
    if (period === 'custom') ['date_from', 'date_to', 'period'].forEach((f) => customFields.add(f));
    else verdict.either.add('date_from');
  }
  return { ...verdict, customFields };
}
