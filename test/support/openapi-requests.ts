/**
 * Requests generated from the OpenAPI document itself (fast-check). Each
 * parameter an operation lists, and each field of a multipart or JSON body,
 * gets a value its schema accepts, one its schema refuses, or none; a JSON
 * body is now and then not an object at all, or left out. The request
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
  /**
   * JSON body fields whose schema accepts more than the document allows in
   * words (a webhook `url`: `https`, a public host, at most 2048
   * characters). Only `valid` values count as valid there; `refused` ones
   * break a rule the words state (whether the schema accepts them or not),
   * so they are a 422 naming the field, like values the schema refuses.
   */
  stated?: Record<string, { valid: fc.Arbitrary<unknown>; refused: fc.Arbitrary<unknown> }>;
}

/** A value of a JSON body field (any JSON, `null` included). */
interface Json {
  json: unknown;
}

/** A value, or the parameter left out (`null`); files are sent as their contents. */
type Value = string | Buffer[] | Json | null;

const isJson = (value: Value): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

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
  /** Null when the operation takes no body, or when a body that may be left out is. */
  body: { kind: 'multipart' | 'json'; bytes: Buffer; contentType: string } | null;
  /** Every value sent, by parameter name (files by their sizes, JSON fields as JSON, a JSON body that is not an object as `body`). */
  sent: Record<string, string>;
  /**
   * Parameters sent (or left out) against their schema, by where they are.
   * A JSON body that is not an object is `body`; a required one left out is
   * `body` and its required fields (an answer may name either).
   */
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
  {
    weight: 2,
    arbitrary: fc.constantFrom('ł', 'Ó', 'ß', 'İ', '\u00a0', '\u0301', '\n', '\t', '\u0000', '\u007f', '\u2028', '\ufeff', '😀', '𝔘', '%', '_', '\\', ','),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 0xa0, max: 0x10ffff })
      .filter((c) => c < 0xd800 || c > 0xdfff)
      .map((c) => String.fromCodePoint(c)),
  },
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
      if (typeof schema.minimum !== 'number' || typeof schema.maximum !== 'number')
        throw unsupported(`${label} (an integer needs minimum and maximum)`, schema);
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
      const short = fc.array(item.valid, { minLength: minItems, maxLength: Math.max(minItems, maxItems) });
      // A list without maxItems (`x-bounded-by`: only the 8 KiB query bounds it) of short items (enum members, ids) is
      // now and then sent long, past any small cap, yet well inside 8 KiB with the other parameters.
      const shortItems = Array.isArray(schema.items?.enum) || schema.items?.type === 'integer';
      const long = fc.array(item.valid, { minLength: 20, maxLength: 50 });
      const lists = schema.maxItems === undefined && shortItems ? fc.oneof({ weight: 4, arbitrary: short }, { weight: 1, arbitrary: long }) : short;
      const valid = lists.map((items) => items.join(','));
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
  const known = new Set(['type', 'enum', 'format', 'pattern', 'minLength', 'maxLength', 'default', 'description', 'contentMediaType', 'x-bounded-by']);
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
    const day = fc
      .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
    return { valid: day, invalid: refused(['2026-02-29', '2026-13-01', '2026-04-31', '2026-1-1', '20260101', '2026-01-01T00:00:00Z', ' 2026-01-01']) };
  }
  if (schema.format !== undefined && schema.format !== 'binary') throw unsupported(label, schema);
  // A pattern draws the values (text rarely matches `^[A-Za-z]{2}$`); a wide maxLength adds text up to it, so the bound is reached.
  const withinLength = (v: string) => [...v].length >= min && (max === undefined || [...v].length <= max);
  const valid = pattern
    ? fc.oneof(
        fc.stringMatching(pattern).filter(withinLength),
        ...(max !== undefined && max - min > 12 ? [text(max - 8, max, unit).filter((v) => pattern.test(v))] : []),
      )
    : text(min, max ?? 40, unit);
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
function multipartSlots(schema: Schema, hints: Hints, label: string): Slot[] {
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
      if (minBytes > 0)
        invalid.push(
          fc
            .tuple(files(0, 2), fc.nat())
            .map(([list, at]) => [...list.slice(0, at % (list.length + 1)), Buffer.alloc(0), ...list.slice(at % (list.length + 1))]),
        );
      if (Number.isFinite(field.maxItems)) invalid.push(files(field.maxItems + 1, field.maxItems + 1));
      // Files over maxLength bytes (10 MiB) are left to the upload tests: hundreds of them would be gigabytes.
      if (!Number.isFinite(maxBytes)) throw unsupported(where, field);
      return {
        name,
        in: 'body' as const,
        schema: field,
        required: required.has(name),
        valid: files(Math.max(minItems, 1), Math.min(maxItems, 3)),
        invalid: invalid.length > 0 ? fc.oneof(...invalid) : null,
      };
    }
    const values = wireValues(field, 'body', where);
    const existing = hints.existing[name];
    // Only existing values are valid here; the schema's other values are refused by the server (422), as the document says in words.
    const valid = existing ? fc.constantFrom(...existing) : values.valid;
    const notExisting = existing ? values.valid.filter((v) => !existing.includes(v)) : null;
    const invalidChoices = [values.invalid, notExisting].filter((a): a is fc.Arbitrary<string> => a !== null);
    return {
      name,
      in: 'body' as const,
      schema: field,
      required: required.has(name),
      valid,
      invalid: invalidChoices.length > 0 ? fc.oneof(...invalidChoices) : null,
    };
  });
}

/** JSON values of other types than a schema's, for it to refuse (each is filtered through the schema first). */
const OTHER_JSON: unknown[] = [null, true, false, 0, -1, 1.5, '', 'x', '1', 'true', [], ['x'], {}, { a: 1 }];

/** Keywords that describe and do not constrain. */
const ANNOTATIONS = ['type', 'description', 'default', 'examples', 'title'];

function onlyKeywords(schema: Schema, keywords: string[], label: string): void {
  if (Object.keys(schema).some((key) => !ANNOTATIONS.includes(key) && !keywords.includes(key))) throw unsupported(label, schema);
}

const json = (value: unknown): Json => ({ json: value });

/**
 * JSON values for one schema (a JSON body field): the types zod's
 * toJSONSchema emits for request bodies. Every invalid value is checked
 * against the schema, so the generator cannot call a valid value invalid.
 */
function jsonValues(schema: Schema, label: string): { valid: fc.Arbitrary<unknown>; invalid: fc.Arbitrary<unknown> | null } {
  const refused = (values: unknown[], arbitraries: Array<fc.Arbitrary<unknown>> = []) =>
    fc.oneof(fc.constantFrom(...values), ...arbitraries).filter((value) => !ajv.validate(schema, value));

  // Nullable, as zod writes it (`anyOf` with `{type: null}`), or as a type list.
  const branches: Schema[] | null = Array.isArray(schema.anyOf)
    ? (onlyKeywords(schema, ['anyOf'], label), schema.anyOf)
    : Array.isArray(schema.type)
      ? schema.type.map((type: string) => (type === 'null' ? { type } : { ...schema, type }))
      : null;
  if (branches) {
    const others = branches.filter((branch) => branch.type !== 'null');
    if (others.length !== 1 || branches.length !== 2) throw unsupported(label, schema);
    const inner = jsonValues(others[0]!, label);
    return { valid: fc.oneof(inner.valid, fc.constant(null)), invalid: refused(OTHER_JSON, inner.invalid ? [inner.invalid] : []) };
  }
  switch (schema.type) {
    case 'integer': {
      onlyKeywords(schema, ['minimum', 'maximum', 'format'], label);
      // The server bounds every integer it reads (2^53-1 at most): a schema without both bounds does not say where.
      if (!Number.isSafeInteger(schema.minimum) || !Number.isSafeInteger(schema.maximum))
        throw unsupported(`${label} (an integer needs safe minimum and maximum)`, schema);
      const [min, max] = [schema.minimum as number, schema.maximum as number];
      const near = (from: number) => fc.bigInt({ min: BigInt(from), max: BigInt(Math.min(max, from + 1000)) }).map(Number);
      return {
        valid: fc.oneof(fc.constantFrom(min, max), near(min), fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number)),
        invalid: refused([...OTHER_JSON, max + 1, min - 1, min + 0.5, 1e300, -1e300, String(min), String(max)]),
      };
    }
    case 'boolean':
      onlyKeywords(schema, [], label);
      return { valid: fc.boolean(), invalid: refused([...OTHER_JSON, 'false', 1, 'yes']) };
    case 'string': {
      onlyKeywords(schema, ['enum', 'pattern', 'minLength', 'maxLength'], label);
      if (Array.isArray(schema.enum)) {
        const members = schema.enum as string[];
        return {
          valid: fc.constantFrom(...members),
          invalid: refused([...OTHER_JSON, 'zz', ...members.map((m) => m.toUpperCase()), ...members.map((m) => `${m}x`), ...members.map((m) => ` ${m}`)]),
        };
      }
      const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : null;
      const [min, max] = [schema.minLength ?? 0, schema.maxLength as number | undefined];
      const valid =
        pattern && max === undefined
          ? fc.stringMatching(pattern).filter((v) => [...v].length >= min)
          : text(min, max ?? 40).filter((v) => !pattern || pattern.test(v));
      // Lengths are code points (JSON Schema's, and zod's): astral characters near the limit count once.
      const tooLong = max === undefined ? [] : [fc.string({ unit: TEXT_UNIT, minLength: max + 1, maxLength: max + 16 })];
      const tooShort = min > 0 ? [fc.string({ unit: TEXT_UNIT, maxLength: min - 1 })] : [];
      const noMatch = pattern ? [text(0, 12)] : [];
      return { valid, invalid: refused(OTHER_JSON, [...tooLong, ...tooShort, ...noMatch]) };
    }
    case 'array': {
      onlyKeywords(schema, ['items', 'minItems', 'maxItems', 'x-bounded-by'], label);
      const item = jsonValues(schema.items as Schema, `${label} item`);
      const minItems = schema.minItems ?? 0;
      const maxItems = Math.max(minItems, Math.min(schema.maxItems ?? 4, 4));
      const valid = fc.array(item.valid, { minLength: minItems, maxLength: maxItems });
      const candidates: Array<fc.Arbitrary<unknown>> = [item.valid];
      // One refused item among valid ones, anywhere.
      if (item.invalid) {
        candidates.push(
          fc
            .tuple(fc.array(item.valid, { maxLength: 3 }), item.invalid, fc.nat())
            .map(([items, bad, at]) => [...items.slice(0, at % (items.length + 1)), bad, ...items.slice(at % (items.length + 1))]),
        );
      }
      if (schema.maxItems !== undefined) candidates.push(fc.array(item.valid, { minLength: schema.maxItems + 1, maxLength: schema.maxItems + 2 }));
      if (minItems > 0) candidates.push(fc.array(item.valid, { maxLength: minItems - 1 }));
      return { valid, invalid: refused(OTHER_JSON, candidates) };
    }
    default:
      throw unsupported(label, schema);
  }
}

/** What a JSON body is instead of an object, now and then. */
type JsonShape = { kind: 'object' } | { kind: 'absent' } | { kind: 'wrapped' } | { kind: 'other'; value: unknown };
/** Names a client may well send that the schema does not list (the answer's own fields, echoed): valid when the schema allows more properties. */
const UNLISTED_NAMES = ['id', 'secret', 'created', 'extra'];

interface JsonBody {
  required: boolean;
  requiredFields: string[];
  fields: Slot[];
  shape: fc.Arbitrary<JsonShape>;
  unlisted: fc.Arbitrary<[string, unknown] | null>;
  contentType: fc.Arbitrary<string>;
}

/** An `application/json` object body: one slot a property, its shape, and an unlisted property now and then. */
function jsonBody(requestBody: Schema, hints: Hints, label: string): JsonBody {
  const schema = requestBody.content['application/json'].schema as Schema;
  // Properties other than those listed are allowed (JSON Schema's default); `additionalProperties` of another kind is not generated yet.
  onlyKeywords(schema, ['properties', 'required'], `${label} body`);
  if (schema.type !== 'object') throw unsupported(`${label} body`, schema);
  const required = new Set((schema.required ?? []) as string[]);
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const fields = Object.entries(properties).map(([name, field]): Slot => {
    const stated = hints.stated?.[name];
    // A field the hints state in full (an export's `filters`, an object of the list's parameters) needs no generator of its own.
    const values = stated ? { valid: stated.valid, invalid: null } : jsonValues(field, `${label} body field ${name}`);
    const valid = stated ? stated.valid : values.valid;
    const invalid: Array<fc.Arbitrary<Value>> = [values.invalid, stated?.refused].filter((a): a is fc.Arbitrary<unknown> => a != null).map((a) => a.map(json));
    // Leaving out a required field is invalid too.
    if (required.has(name)) invalid.push(fc.constant(null));
    return { name, in: 'body', schema: field, required: required.has(name), valid: valid.map(json), invalid: invalid.length > 0 ? fc.oneof(...invalid) : null };
  });
  // Arrays and JSON scalars (a string, number, boolean or null): each is 422 naming `body`.
  const notAnObject = fc.oneof(
    fc.constant<unknown>([]),
    fc.array(fc.jsonValue({ maxDepth: 1 }), { minLength: 1, maxLength: 3 }),
    fc.jsonValue({ maxDepth: 0 }),
  );
  return {
    required: requestBody.required === true,
    requiredFields: [...required],
    fields,
    shape: fc.oneof(
      { weight: 14, arbitrary: fc.constant<JsonShape>({ kind: 'object' }) },
      { weight: 1, arbitrary: fc.constant<JsonShape>({ kind: 'absent' }) },
      { weight: 1, arbitrary: fc.constant<JsonShape>({ kind: 'wrapped' }) },
      { weight: 2, arbitrary: notAnObject.filter((value) => !ajv.validate(schema, value)).map((value): JsonShape => ({ kind: 'other', value })) },
    ),
    unlisted: fc.oneof(
      { weight: 4, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...UNLISTED_NAMES.filter((name) => !(name in properties))), fc.jsonValue({ maxDepth: 1 })) },
    ),
    // Media type parameters and case do not change the type.
    contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'Application/JSON'),
  };
}

interface OperationBody {
  multipart: Slot[] | null;
  json: JsonBody | null;
}

function operationBody(operation: Schema, hints: Hints, label: string): OperationBody {
  const content = operation.requestBody?.content as Record<string, { schema: Schema }> | undefined;
  if (!content) return { multipart: null, json: null };
  const media = Object.keys(content);
  if (media.length === 1 && media[0] === 'multipart/form-data')
    return { multipart: multipartSlots(content['multipart/form-data']!.schema, hints, label), json: null };
  if (media.length === 1 && media[0] === 'application/json') return { multipart: null, json: jsonBody(operation.requestBody as Schema, hints, label) };
  throw unsupported(`${label} body`, content);
}

/**
 * Requests to one operation: most with every value valid (or left out),
 * some with one or two values invalid.
 */
export function requestArbitrary(doc: OpenApiDoc, method: string, path: string, hints: Hints): fc.Arbitrary<GeneratedRequest> {
  const operation = doc.paths[path]?.[method] as Schema | undefined;
  if (!operation) throw new Error(`${method} ${path} is not in the document`);
  const label = `${method.toUpperCase()} ${path}`;
  const body = operationBody(operation, hints, label);
  const slots = [
    ...((operation.parameters ?? []) as DocParameter[]).map((p) => parameterSlot(p, hints)),
    ...(body.multipart ?? []),
    ...(body.json?.fields ?? []),
  ];
  const choices = slots.map((slot) =>
    fc.record({ valid: slot.required ? slot.valid : fc.option(slot.valid, { nil: null }), invalid: slot.invalid ?? fc.constant(null) }),
  );
  const breakable = slots.filter((slot) => slot.invalid !== null).map((slot) => slot.name);
  const broken =
    breakable.length === 0
      ? fc.constant<string[]>([])
      : fc.oneof(
          { weight: 3, arbitrary: fc.constant<string[]>([]) },
          { weight: 2, arbitrary: fc.subarray(breakable, { minLength: 1, maxLength: Math.min(2, breakable.length) }) },
        );
  const jsonChoices = body.json ? fc.tuple(body.json.shape, body.json.unlisted, body.json.contentType) : fc.constant(null);
  return fc.tuple(fc.tuple(...choices), broken, jsonChoices).map(([picked, brokenNames, jsonPicked]) => {
    const request: GeneratedRequest = {
      method: method.toUpperCase(),
      path,
      target: path,
      headers: {},
      body: null,
      sent: {},
      invalid: { path: [], other: [] },
      unknownIds: [],
    };
    const query: string[] = [];
    const parts: Part[] = [];
    const fields: Record<string, unknown> = {};
    slots.forEach((slot, i) => {
      const isBroken = brokenNames.includes(slot.name);
      const value = isBroken ? picked[i]!.invalid : picked[i]!.valid;
      if (isBroken) request.invalid[slot.in === 'path' ? 'path' : 'other'].push(slot.name);
      if (value === null) return;
      // The oracle rests on this: a value called valid is one the document accepts (hints included).
      if (!isBroken && !fits(value, slot.schema))
        throw new Error(`${label}: the generated value ${JSON.stringify(value)} of ${slot.name} does not fit its schema`);
      if (isJson(value)) {
        fields[slot.name] = value.json;
        request.sent[slot.name] = JSON.stringify(value.json);
        return;
      }
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
    if (body.multipart) {
      const { body: bytes, contentType } = multipart(parts);
      request.body = { kind: 'multipart', bytes, contentType };
    }
    if (body.json && jsonPicked) {
      const [shape, unlisted, contentType] = jsonPicked;
      const object = unlisted ? { ...fields, [unlisted[0]]: unlisted[1] } : fields;
      if (unlisted) request.sent[unlisted[0]] = JSON.stringify(unlisted[1]);
      if (shape.kind !== 'object') {
        // Not an object: its fields are not sent as fields, and only the body itself is refused (or left out).
        const names = new Set([...body.json.fields.map((slot) => slot.name), ...(unlisted ? [unlisted[0]] : [])]);
        request.invalid.other = request.invalid.other.filter((name) => !names.has(name));
        for (const name of names) delete request.sent[name];
      }
      const value = shape.kind === 'object' ? object : shape.kind === 'wrapped' ? [object] : shape.kind === 'other' ? shape.value : undefined;
      if (shape.kind === 'wrapped' || shape.kind === 'other') request.invalid.other.push('body');
      if (shape.kind === 'absent' && body.json.required) request.invalid.other.push('body', ...body.json.requiredFields);
      if (value !== undefined) {
        const text = JSON.stringify(value);
        if (shape.kind !== 'object') request.sent.body = text;
        request.body = { kind: 'json', bytes: Buffer.from(text), contentType };
      }
    }
    return request;
  });
}

/** Whether a value called valid fits its schema: a wire string as read by the server, a JSON value as it is. */
function fits(value: Exclude<Value, null>, schema: Schema): boolean {
  if (isJson(value)) return ajv.validate(schema, value.json);
  return typeof value !== 'string' || schemaAccepts(value, schema);
}
