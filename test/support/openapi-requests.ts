/**
 * Requests generated from the OpenAPI document itself (fast-check). Each
 * parameter an operation lists, and each field of a multipart body, gets a
 * value its schema accepts, one its schema refuses, or none; the request
 * remembers which, so a test can say what the answer must be without
 * knowing the operation. A schema keyword this module does not know stops
 * the test (`unsupported`): a new kind of parameter is generated, never
 * skipped.
 */
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { multipart, type Part } from './multipart.js';
import type { OpenApiDoc } from './openapi-contract.js';

type Schema = Record<string, any>;
type Location = 'path' | 'query' | 'header' | 'body';

interface DocParameter {
  name: string;
  in: Location;
  required?: boolean;
  schema: Schema;
  style?: string;
  explode?: boolean;
}

/** What the document cannot say about values: which exist (ids). */
export interface Hints {
  /**
   * Values that name something, by parameter or body field. A path id
   * outside them is valid but names nothing (404); a body field outside them
   * is refused (422: `category_id` must be an existing category), so only
   * these count as valid there.
   */
  existing: Record<string, readonly string[]>;
  /** More valid values worth sending often, by parameter (`*` for If-None-Match). */
  extra?: Record<string, readonly string[]>;
  /** The only valid values to send, by parameter, where the others cost time (a long poll's `wait`); invalid ones are still generated. */
  only?: Record<string, readonly string[]>;
}

/** A value, or the parameter left out (`null`); files are sent as their contents. */
type Value = string | Buffer[] | null;

interface Slot {
  name: string;
  in: Location;
  schema: Schema;
  required: boolean;
  valid: fc.Arbitrary<Value>;
  /** Null when the schema refuses nothing that can be sent. */
  invalid: fc.Arbitrary<Value> | null;
}

export interface GeneratedRequest {
  method: string;
  /** The operation's path as the document names it. */
  path: string;
  /** Path and query under the server URL (`/v1` not included). */
  target: string;
  headers: Record<string, string>;
  body: { bytes: Buffer; contentType: string } | null;
  /** Every value sent, by parameter name (files by their sizes). */
  sent: Record<string, string>;
  /** Parameters sent (or left out) against their schema, by where they are. */
  invalid: { path: string[]; other: string[] };
  /** Path parameters whose value the hints do not know (valid, but naming nothing). */
  unknownIds: string[];
}

export class UnsupportedSchemaError extends Error {}
const unsupported = (where: string, schema: Schema) => new UnsupportedSchemaError(`${where}: no generator for ${JSON.stringify(schema)}`);

const ajv = new Ajv2020({ strict: false, validateFormats: false });

/** One code point, mostly ASCII, with the characters that break naive code: controls, line breaks, astral, combining. */
const TEXT_UNIT = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.constantFrom('ł', 'Ó', 'ß', 'İ', '\u00a0', '\u0301', '\n', '\t', '\u0000', '\u007f', '\u2028', '\ufeff', '😀', '𝔘', '%', '_', '\\', ',') },
  { weight: 1, arbitrary: fc.integer({ min: 0xa0, max: 0x10ffff }).filter((c) => c < 0xd800 || c > 0xdfff).map((c) => String.fromCodePoint(c)) },
);
/** Visible ASCII: what a header value can hold without its meaning changing on the way. */
const VISIBLE_UNIT = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));

/** Text of `min` to `max` code points (JSON Schema's length), short ones and ones near the limit both. */
function text(min: number, max: number, unit: fc.Arbitrary<string> = TEXT_UNIT): fc.Arbitrary<string> {
  const short = fc.string({ unit, minLength: min, maxLength: Math.min(max, min + 12) });
  return max - min <= 12 ? short : fc.oneof(short, fc.string({ unit, minLength: Math.max(min, max - 8), maxLength: max }));
}

/** The value as the document types it, read from the wire: digits as numbers, lists split. */
function typed(wire: string, schema: Schema): unknown {
  if (schema.type === 'integer') return /^-?\d+$/.test(wire) ? Number(wire) : wire;
  if (schema.type === 'boolean') return wire === 'true' ? true : wire === 'false' ? false : wire;
  if (schema.type === 'array') return wire.split(',').map((item) => typed(item, schema.items as Schema));
  if (Array.isArray(schema.anyOf) && wire === 'null' && schema.anyOf.some((branch: Schema) => branch.type === 'null')) return null;
  if (Array.isArray(schema.anyOf)) return typed(wire, schema.anyOf.find((branch: Schema) => branch.type !== 'null') as Schema);
  return wire;
}

/** Whether the schema accepts the wire value: JSON Schema, plus the one format the document uses (`date`, a real calendar day). */
export function schemaAccepts(wire: string, schema: Schema): boolean {
  const value = typed(wire, schema);
  if (!ajv.validate(schema, value)) return false;
  const dates = schema.format === 'date' ? [value] : schema.items?.format === 'date' ? (value as unknown[]) : [];
  return dates.every((day) => typeof day === 'string' && isCalendarDay(day));
}

function isCalendarDay(day: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().slice(0, 10) === day;
}

/**
 * Values for one schema, as strings on the wire. `item` is a member of a
 * comma-separated list (where an empty item is refused, not absent).
 */
function wireValues(schema: Schema, where: Location | 'item', label: string): { valid: fc.Arbitrary<string>; invalid: fc.Arbitrary<string> | null } {
  // Only a list item can be empty: an empty parameter or field counts as absent, and an empty path segment is another path.
  const emptyIsAValue = where === 'item';
  const candidates = (values: Array<string | fc.Arbitrary<string>>) => fc.oneof(...values.map((v) => (typeof v === 'string' ? fc.constant(v) : v)));
  // Every invalid value is checked against the schema, so the generator cannot call a valid value invalid;
  // an item with a comma would be two items.
  const refused = (values: Array<string | fc.Arbitrary<string>>) =>
    candidates(values).filter(
      (v) => !schemaAccepts(v, schema) && (emptyIsAValue || v !== '') && (where !== 'header' || sendableHeader(v)) && (where !== 'item' || !v.includes(',')),
    );

  if (Array.isArray(schema.anyOf)) {
    const nullable = schema.anyOf.some((branch: Schema) => branch.type === 'null');
    const others = schema.anyOf.filter((branch: Schema) => branch.type !== 'null') as Schema[];
    if (!nullable || others.length !== 1) throw unsupported(label, schema);
    const inner = wireValues(others[0]!, where, label);
    return { valid: fc.oneof(inner.valid, fc.constant('null')), invalid: inner.invalid };
  }
  switch (schema.type) {
    case 'integer': {
      // The server bounds every integer it reads (2^53-1 at most): a schema without both bounds does not say where.
      if (typeof schema.minimum !== 'number' || typeof schema.maximum !== 'number') throw unsupported(`${label} (an integer needs minimum and maximum)`, schema);
      const [min, max] = [BigInt(schema.minimum), BigInt(schema.maximum)];
      return {
        valid: fc.oneof(fc.constantFrom(min, max), fc.bigInt({ min, max: min + 1000n < max ? min + 1000n : max }), fc.bigInt({ min, max })).map(String),
        invalid: refused([String(max + 1n), String(min - 1n), String(max * 10n ** 6n), '1.5', 'abc', '1e3', '0x10', '+1', '１', '']),
      };
    }
    case 'boolean':
      return { valid: fc.constantFrom('true', 'false'), invalid: refused(['yes', 'TRUE', '2', 'on', '']) };
    case 'array': {
      if (where !== 'query' || schema.style === 'deepObject') throw unsupported(label, schema);
      const item = wireValues(schema.items as Schema, 'item', `${label} item`);
      const minItems = Math.max(1, schema.minItems ?? 1);
      const maxItems = Math.min(schema.maxItems ?? 4, 4);
      const valid = fc.array(item.valid, { minLength: minItems, maxLength: Math.max(minItems, maxItems) }).map((items) => items.join(','));
      const invalidItem = item.invalid;
      const invalid = invalidItem
        ? fc
            .tuple(fc.array(item.valid, { minLength: 1, maxLength: 3 }), invalidItem, fc.nat())
            .map(([items, bad, at]) => [...items.slice(0, at % (items.length + 1)), bad, ...items.slice(at % (items.length + 1))].join(','))
        : null;
      return { valid, invalid: invalid && invalid.filter((v) => !schemaAccepts(v, schema)) };
    }
    case 'string':
      return stringValues(schema, where, label, refused);
    default:
      throw unsupported(label, schema);
  }
}

function stringValues(
  schema: Schema,
  where: Location | 'item',
  label: string,
  refused: (values: Array<string | fc.Arbitrary<string>>) => fc.Arbitrary<string>,
): { valid: fc.Arbitrary<string>; invalid: fc.Arbitrary<string> | null } {
  const known = new Set(['type', 'enum', 'format', 'pattern', 'minLength', 'maxLength', 'default', 'description', 'contentMediaType']);
  if (Object.keys(schema).some((key) => !known.has(key))) throw unsupported(label, schema);
  const unit = where === 'header' ? VISIBLE_UNIT : TEXT_UNIT;
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : null;
  const min = schema.minLength ?? 0;
  const max = schema.maxLength;
  if (Array.isArray(schema.enum)) {
    const members = schema.enum as string[];
    return { valid: fc.constantFrom(...members), invalid: refused(['zz', '', ...members.map((m) => m.toUpperCase()), ...members.map((m) => `${m}x`)]) };
  }
  if (schema.format === 'date') {
    const day = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    return { valid: day, invalid: refused(['2026-02-29', '2026-13-01', '2026-04-31', '2026-1-1', '20260101', '2026-01-01T00:00:00Z', ' 2026-01-01']) };
  }
  if (schema.format !== undefined && schema.format !== 'binary') throw unsupported(label, schema);
  // A pattern with no length of its own bounds the value itself (`^[A-Za-z]{2}$`); otherwise text up to maxLength.
  const valid =
    pattern && max === undefined
      ? fc.stringMatching(pattern).filter((v) => v.length > 0 || min === 0)
      : text(min, max ?? 40, unit).filter((v) => !pattern || pattern.test(v));
  const tooLong = max === undefined ? [] : [fc.string({ unit: VISIBLE_UNIT.filter((c) => c !== ','), minLength: max + 1, maxLength: max + 16 })];
  const noMatch = pattern ? [' ', '\t ', 'a b', 'abc', '1', 'x'.repeat(300), 'é', text(1, 8, unit)] : [];
  const invalidCandidates = [...tooLong, ...noMatch, ...(min > 0 ? [''] : [])];
  return { valid, invalid: invalidCandidates.length > 0 ? refused(invalidCandidates) : null };
}

/** A header value that arrives as sent: visible ASCII or Latin-1 inside, no control byte, nothing the parser trims. */
function sendableHeader(value: string): boolean {
  return /^[\x21-\x7e\x80-\xff]([\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?$/.test(value);
}

function parameterSlot(parameter: DocParameter, hints: Hints): Slot {
  const label = `${parameter.in} parameter ${parameter.name}`;
  if (parameter.schema.type === 'array' && (parameter.style !== 'form' || parameter.explode !== false)) throw unsupported(label, parameter.schema);
  const values = wireValues(parameter.schema, parameter.in, label);
  const existing = hints.existing[parameter.name];
  const extra = hints.extra?.[parameter.name] ?? [];
  let valid: fc.Arbitrary<string> = values.valid;
  if (existing) valid = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...existing) }, { weight: 1, arbitrary: values.valid });
  if (extra.length > 0) valid = fc.oneof(valid, fc.constantFrom(...extra));
  const only = hints.only?.[parameter.name];
  if (only) valid = fc.constantFrom(...only);
  const required = parameter.required === true;
  // Leaving out a required parameter is invalid too.
  const invalid = required ? fc.oneof(fc.constant(null), ...(values.invalid ? [values.invalid] : [])) : values.invalid;
  return { name: parameter.name, in: parameter.in, schema: parameter.schema, required, valid, invalid };
}

/** The fields of a multipart/form-data body: files as arrays of contents, other fields as text. */
function bodySlots(operation: Schema, hints: Hints, label: string): Slot[] {
  const content = operation.requestBody?.content as Record<string, { schema: Schema }> | undefined;
  if (!content) return [];
  const media = Object.keys(content);
  if (media.length !== 1 || media[0] !== 'multipart/form-data') throw unsupported(`${label} body`, content);
  const schema = content['multipart/form-data']!.schema;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(schema.properties as Record<string, Schema>).map(([name, field]) => {
    const where = `${label} body field ${name}`;
    if (field.type === 'array' && field.items?.format === 'binary') {
      const [minItems, maxItems] = [field.minItems ?? 0, field.maxItems ?? 3];
      const [minBytes, maxBytes] = [field.items.minLength ?? 0, field.items.maxLength ?? Infinity];
      const file = fc.uint8Array({ minLength: minBytes, maxLength: 48 }).map((bytes) => Buffer.from(bytes));
      const files = (min: number, max: number) => fc.array(file, { minLength: min, maxLength: max });
      const invalid: Array<fc.Arbitrary<Value>> = [];
      if (minItems > 0) invalid.push(fc.constant(null), fc.constant([]));
      if (minBytes > 0) invalid.push(fc.tuple(files(0, 2), fc.nat()).map(([list, at]) => [...list.slice(0, at % (list.length + 1)), Buffer.alloc(0), ...list.slice(at % (list.length + 1))]));
      if (Number.isFinite(field.maxItems)) invalid.push(files(field.maxItems + 1, field.maxItems + 1));
      // Files over maxLength bytes (10 MiB) are left to the upload tests: hundreds of them would be gigabytes.
      if (!Number.isFinite(maxBytes)) throw unsupported(where, field);
      return { name, in: 'body' as const, schema: field, required: required.has(name), valid: files(Math.max(minItems, 1), Math.min(maxItems, 3)), invalid: invalid.length > 0 ? fc.oneof(...invalid) : null };
    }
    const values = wireValues(field, 'body', where);
    const existing = hints.existing[name];
    // Only existing values are valid here; the schema's other values are refused by the server (422), as the document says in words.
    const valid = existing ? fc.constantFrom(...existing) : values.valid;
    const notExisting = existing ? values.valid.filter((v) => !existing.includes(v)) : null;
    const invalidChoices = [values.invalid, notExisting].filter((a): a is fc.Arbitrary<string> => a !== null);
    return { name, in: 'body' as const, schema: field, required: required.has(name), valid, invalid: invalidChoices.length > 0 ? fc.oneof(...invalidChoices) : null };
  });
}

/**
 * Requests to one operation: most with every value valid (or left out),
 * some with one or two values invalid.
 */
export function requestArbitrary(doc: OpenApiDoc, method: string, path: string, hints: Hints): fc.Arbitrary<GeneratedRequest> {
  const operation = doc.paths[path]?.[method] as Schema | undefined;
  if (!operation) throw new Error(`${method} ${path} is not in the document`);
  const label = `${method.toUpperCase()} ${path}`;
  const slots = [...((operation.parameters ?? []) as DocParameter[]).map((p) => parameterSlot(p, hints)), ...bodySlots(operation, hints, label)];
  const choices = slots.map((slot) =>
    fc.record({ valid: slot.required ? slot.valid : fc.option(slot.valid, { nil: null }), invalid: slot.invalid ?? fc.constant(null) }),
  );
  const breakable = slots.filter((slot) => slot.invalid !== null).map((slot) => slot.name);
  const broken =
    breakable.length === 0 ? fc.constant<string[]>([]) : fc.oneof({ weight: 3, arbitrary: fc.constant<string[]>([]) }, { weight: 2, arbitrary: fc.subarray(breakable, { minLength: 1, maxLength: Math.min(2, breakable.length) }) });
  return fc.tuple(fc.tuple(...choices), broken).map(([picked, brokenNames]) => {
    const request: GeneratedRequest = { method: method.toUpperCase(), path, target: path, headers: {}, body: null, sent: {}, invalid: { path: [], other: [] }, unknownIds: [] };
    const query: string[] = [];
    const parts: Part[] = [];
    slots.forEach((slot, i) => {
      const isBroken = brokenNames.includes(slot.name);
      const value = isBroken ? picked[i]!.invalid : picked[i]!.valid;
      if (isBroken) request.invalid[slot.in === 'path' ? 'path' : 'other'].push(slot.name);
      if (value === null) return;
      // The oracle rests on this: a value called valid is one the document accepts (hints included).
      if (!isBroken && typeof value === 'string' && !schemaAccepts(value, slot.schema)) throw new Error(`${label}: the generated value ${JSON.stringify(value)} of ${slot.name} does not fit its schema`);
      request.sent[slot.name] = Array.isArray(value) ? `${value.length} files of ${value.map((f) => f.length).join(', ')} bytes` : value;
      if (Array.isArray(value)) {
        value.forEach((content, n) => parts.push({ name: slot.name, filename: `file-${n}.bin`, content }));
        return;
      }
      if (slot.in === 'path') {
        request.target = request.target.replace(`{${slot.name}}`, encodeURIComponent(value));
        if (!isBroken && !(hints.existing[slot.name] ?? []).includes(value)) request.unknownIds.push(slot.name);
      } else if (slot.in === 'query') query.push(`${encodeURIComponent(slot.name)}=${encodeURIComponent(value)}`);
      else if (slot.in === 'header') request.headers[slot.name] = value;
      else parts.push({ name: slot.name, content: value });
    });
    if (query.length > 0) request.target += `?${query.join('&')}`;
    if (slots.some((slot) => slot.in === 'body')) {
      const { body, contentType } = multipart(parts);
      request.body = { bytes: body, contentType };
    }
    return request;
  });
}
