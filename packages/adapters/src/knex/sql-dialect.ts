import type { Knex } from 'knex';
import { foldText } from './unicode-text.js';

/** A piece of SQL with its bindings, for knex's whereRaw/orderByRaw. */
export interface SqlFragment {
  sql: string;
  bindings: Knex.RawBinding[];
}

/**
 * The few places where SQLite and MariaDB/MySQL need different SQL: literal,
 * case-insensitive (Unicode-aware) text matching and text ordering. Column
 * names passed in come from the code's own allow-lists, never from a request.
 */
export interface SqlDialect {
  readonly name: 'sqlite' | 'mysql';
  /** `column` contains `text` literally (no wildcards), ignoring case. */
  contains(column: string, text: string): SqlFragment;
  /** `column` equals one of `values`, ignoring case. */
  equalsAny(column: string, values: string[]): SqlFragment;
  /** `column` equals `text`, ignoring case (as an expression usable in ORDER BY). */
  equals(column: string, text: string): SqlFragment;
  /** An ORDER BY expression that sorts text like utf8mb4_unicode_ci. */
  textOrder(column: string): string;
}

export function isMysql(knex: Knex): boolean {
  const client = String((knex.client as { config: Knex.Config }).config.client);
  return client === 'mysql2' || client === 'mysql';
}

export function dialectOf(knex: Knex): SqlDialect {
  return isMysql(knex) ? mysqlDialect : sqliteDialect;
}

/** `!` escapes LIKE's wildcards; a backslash would depend on the server's sql_mode. */
function likeLiteral(text: string): string {
  return text.replace(/[!%_]/g, (c) => `!${c}`);
}

/** The columns' utf8mb4_unicode_ci collation makes LIKE and = case- and accent-insensitive. */
const mysqlDialect: SqlDialect = {
  name: 'mysql',
  contains: (column, text) => ({ sql: `${column} LIKE ? ESCAPE '!'`, bindings: [`%${likeLiteral(text)}%`] }),
  equalsAny: (column, values) => ({ sql: `${column} IN (${values.map(() => '?').join(', ')})`, bindings: values }),
  equals: (column, text) => ({ sql: `(${column} = ?)`, bindings: [text] }),
  textOrder: (column) => column,
};

/** `ufold` and `usortkey` are registered on every connection by createKnex. */
const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  contains: (column, text) => ({ sql: `instr(ufold(${column}), ?) > 0`, bindings: [foldText(text)] }),
  equalsAny: (column, values) => ({
    sql: `ufold(${column}) IN (${values.map(() => '?').join(', ')})`,
    bindings: values.map(foldText),
  }),
  equals: (column, text) => ({ sql: `(ufold(${column}) = ?)`, bindings: [foldText(text)] }),
  textOrder: (column) => `usortkey(${column})`,
};
