import type { Knex } from 'knex';

/** A write refused by a UNIQUE or PRIMARY KEY constraint, in either database. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** MariaDB quotes the refused value in a duplicate-key message: `Duplicate entry 'whsec_…' for key 'secret'`. */
const DUPLICATE_ENTRY = /Duplicate entry '(?:[^'\\]|\\.|'')*' for key/g;

/**
 * Keeps the values bound to a statement out of its errors, which are logged:
 * a webhook secret, a URL, a client's text. knex is built with
 * `compileSqlOnError: false`, so its message holds the SQL with `?` in place
 * of each value; this drops what the driver adds on top (mysql2's `sql`, the
 * statement with the values written in, and the value of a duplicate key),
 * on every connection, in transactions too (their errors pass the root
 * client's `query-error` event before they are thrown).
 */
export function keepBoundValuesOutOfErrors(knex: Knex): void {
  const client = knex.client as { on(event: 'query-error', listener: (error: unknown, query: { sql?: unknown } | undefined) => void): void };
  client.on('query-error', (error, query) => scrubDatabaseError(error, query?.sql));
}

/** `error` without bound values: `sql` becomes the statement with placeholders, a duplicate key's value is left out. */
export function scrubDatabaseError(error: unknown, placeholderSql?: unknown): void {
  if (!(error instanceof Error)) return;
  const fields = error as Error & { sql?: unknown; sqlMessage?: unknown; bindings?: unknown; values?: unknown };
  if ('sql' in fields) fields.sql = typeof placeholderSql === 'string' ? placeholderSql : undefined;
  if ('bindings' in fields) delete fields.bindings;
  if ('values' in fields) delete fields.values;
  error.message = withoutDuplicateValue(error.message);
  if (typeof fields.sqlMessage === 'string') fields.sqlMessage = withoutDuplicateValue(fields.sqlMessage);
  if (typeof error.stack === 'string') error.stack = withoutDuplicateValue(error.stack);
}

function withoutDuplicateValue(text: string): string {
  return text.replace(DUPLICATE_ENTRY, "Duplicate entry '…' for key");
}
