/**
 * Column values as the drivers return them: mysql2 gives DECIMAL as strings
 * (and BIGINT as numbers), better-sqlite3 gives numbers. Anything else is a
 * schema mismatch and should fail loudly rather than leak NaN into a response.
 */
export function toNumber(value: unknown, column: string): number {
  const number = typeof value === 'number' ? value : typeof value === 'string' || typeof value === 'bigint' ? Number(value) : NaN;
  if (!Number.isFinite(number)) throw new Error(`Unexpected value in column ${column}`);
  return number;
}

export function toNullableNumber(value: unknown, column: string): number | null {
  return value === null || value === undefined ? null : toNumber(value, column);
}

export function toText(value: unknown, column: string): string {
  if (typeof value !== 'string') throw new Error(`Unexpected value in column ${column}`);
  return value;
}

/** tasks, files and contacts are kept as JSON text and returned as given. */
export function toJsonArray(value: unknown, column: string): unknown[] {
  const parsed: unknown = JSON.parse(toText(value, column));
  if (!Array.isArray(parsed)) throw new Error(`Unexpected value in column ${column}`);
  return parsed;
}
