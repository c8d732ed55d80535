import type { FieldErrors } from './common.errors.js';

export interface SingleValues {
  /** Known parameters sent once with a non-empty value. */
  values: Record<string, string>;
  /** Known parameters sent twice or in array/object form (`types[]=s`, `page[x]=1`). */
  errors: FieldErrors;
}

/**
 * Reduces raw query pairs to one scalar per known parameter. A parameter sent
 * twice or in bracket form is invalid; an empty value counts as absent;
 * unknown parameters are ignored.
 */
export function readSingleValues(pairs: Iterable<[string, string]>, known: readonly string[]): SingleValues {
  const seen = new Map<string, string[]>();
  const malformed = new Set<string>();
  for (const [rawKey, value] of pairs) {
    const bracket = rawKey.indexOf('[');
    const key = bracket === -1 ? rawKey : rawKey.slice(0, bracket);
    if (!known.includes(key)) continue;
    if (bracket !== -1) malformed.add(key);
    const list = seen.get(key) ?? [];
    list.push(value);
    seen.set(key, list);
  }
  const values: Record<string, string> = {};
  const errors: FieldErrors = {};
  for (const [key, list] of seen) {
    if (malformed.has(key) || list.length > 1) {
      errors[key] = [`The ${key} field must be a single value.`];
      continue;
    }
    if (list[0] !== '') values[key] = list[0]!;
  }
  return { values, errors };
}
