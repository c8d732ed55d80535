import { z } from 'zod';
import { toJsonSchema, withIntegerFormats, type JsonSchema } from './json-schema.js';

/** Metadata the domain's query schemas attach with `.meta()`. */
interface FieldMeta {
  description?: string;
  default?: string;
  format?: string;
}

export interface QueryParameter {
  name: string;
  in: 'query';
  required: boolean;
  description?: string;
  schema: JsonSchema;
  style?: 'form';
  explode?: boolean;
}

const QUERY_LIST_BOUND = 'No item limit of its own: the 8 KiB query string bounds it (414).';

/** A text item of a comma-separated list, as sent: no comma, and something besides spaces. */
const LIST_TEXT_ITEM = '^[^,]*[^,\\s][^,]*$';

/**
 * OpenAPI query parameters from the very zod object that validates the
 * query. Each field takes one string; the schema shown is what that string
 * must hold: an integer with its bounds, an enum, or a comma-separated list
 * (`style: form, explode: false`, which is how OpenAPI spells `types=s,c`).
 */
export function queryParameters(schema: z.ZodObject, required: readonly string[] = []): QueryParameter[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const meta = (z.globalRegistry.get(field as z.ZodType) ?? {}) as FieldMeta;
    const value = withIntegerFormats(describeValue(field as z.ZodType)) as JsonSchema;
    if (meta.format) value.format = meta.format;
    if (meta.default !== undefined) value.default = typedDefault(value, meta.default);
    const parameter: QueryParameter = { name, in: 'query', required: required.includes(name), schema: value };
    if (meta.description) parameter.description = meta.description;
    if (value.type === 'boolean') parameter.description = `${meta.description ?? ''} \`true\` or \`false\`; \`1\` and \`0\` are accepted too.`.trim();
    if (value.type === 'array') Object.assign(parameter, { style: 'form', explode: false });
    return parameter;
  });
}

/**
 * Walks the zod schema of one query value. Transforms cannot be shown, so a
 * pipe shows its target when that is a plain type (`"12"` -> integer 1..500)
 * and its source otherwise (`"s,c"` -> the accepted strings), a flag as a boolean.
 */
function describeValue(schema: z.ZodType): JsonSchema {
  const def = (schema as z.ZodType & { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
      return describeValue(def.innerType as z.ZodType);
    case 'pipe': {
      const input = def.in as z.ZodType;
      const output = def.out as z.ZodType;
      const outType = (output as unknown as { _zod: { def: { type: string } } })._zod.def.type;
      if (outType === 'transform') return asBoolean(describeValue(input));
      const target = describeValue(output);
      const source = describeValue(input);
      // Digits read as a number: the value is an integer, whatever zod calls it.
      if (target.type === 'number' && source.type === 'string' && source.pattern === '^\\d+$') target.type = 'integer';
      // Text checked twice (a list item: not empty, then at most 64 characters): both checks hold.
      if (target.type === 'string' && source.type === 'string' && target.enum === undefined) return { ...source, ...target };
      return target;
    }
    case 'array': {
      const { minItems, maxItems } = toJsonSchema(schema, 'input');
      const items = describeValue(def.element as z.ZodType);
      // On the wire a text item is what lies between commas, trimmed: it holds no comma and must not be spaces only.
      if (items.type === 'string' && items.enum === undefined) items.pattern = LIST_TEXT_ITEM;
      // A list takes any number of items (repeats count once): only the 8 KiB query string bounds it, which `x-bounded-by` says.
      const bound = maxItems === undefined ? { 'x-bounded-by': QUERY_LIST_BOUND } : { maxItems };
      return { type: 'array', ...(minItems === undefined ? {} : { minItems }), ...bound, items };
    }
    default:
      return toJsonSchema(schema, 'input');
  }
}

/**
 * A flag read from `true`/`false`/`1`/`0` is shown as a boolean, which is
 * what a generated client wants to pass; it serialises as `true`/`false`,
 * and the description adds that `1` and `0` are accepted too.
 */
function asBoolean(value: JsonSchema): JsonSchema {
  const members = Array.isArray(value.enum) ? [...(value.enum as unknown[])].sort() : [];
  return members.join() === '0,1,false,true' ? { type: 'boolean' } : value;
}

function typedDefault(value: JsonSchema, raw: string): unknown {
  if (value.type === 'integer') return Number(raw);
  if (value.type === 'boolean') return raw === 'true';
  return raw;
}
