import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/**
 * zod to JSON Schema 2020-12 (what OpenAPI 3.1 uses), without the `$schema`
 * header that only a standalone document needs. A request value keeps the
 * ±2^53 bounds zod puts on every integer: the server refuses a `page` past
 * them (422), so a client must be able to read that. A response drops them
 * (true, but noise to a reader).
 */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as JsonSchema;
  return io === 'input' ? (withIntegerFormats(rest) as JsonSchema) : (withoutSafeIntegerBounds(rest) as JsonSchema);
}

const INT32 = 2 ** 31;

/**
 * A request integer says how wide it is (`int32` when its bounds fit, else
 * `int64`: ids and cursors go up to 2^53-1), so a client can pick its type.
 */
export function withIntegerFormats(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withIntegerFormats);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonSchema = Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withIntegerFormats(inner)]));
  if (out.type === 'integer' && out.format === undefined) {
    const fits = typeof out.minimum === 'number' && typeof out.maximum === 'number' && out.minimum >= -INT32 && out.maximum < INT32;
    out.format = fits ? 'int32' : 'int64';
  }
  return out;
}

export function withoutSafeIntegerBounds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSafeIntegerBounds);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonSchema = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'minimum' && inner === -Number.MAX_SAFE_INTEGER) continue;
    if (key === 'maximum' && inner === Number.MAX_SAFE_INTEGER) continue;
    out[key] = withoutSafeIntegerBounds(inner);
  }
  return out;
}
