import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';
import { indexFold } from './search-text.js';

/** A directory with more distinct customer names than this is not narrowed by them (reading them would cost more than it saves). */
const NAMES_READ_AT_MOST = 50_000;
/** More matching names than this make an IN list longer than the ranges it saves. */
const NAMES_MATCHED_AT_MOST = 5_000;

/**
 * The directory's distinct customer names that may contain `fragment`, for
 * a fragment too common for the trigram index (`Cargo` in a fifth of a
 * million invoices): on MariaDB the names come from the customer-name sort
 * index by a loose scan (one index dive per distinct name, a few thousand
 * for a million invoices) and are matched here with the index's fold, which
 * is coarser than the collation; `customer_name IN (names)` then counts and
 * pages the invoices from that index instead of reading every row. The list
 * only narrows: the LIKE predicate still decides, and a name equal under the
 * collation to a listed one is matched by IN too. Null when it does not
 * apply (SQLite, too many names); read from the base table, so never stale.
 */
export async function customerNamesContaining(knex: Knex, directory: string, fragment: string): Promise<string[] | null> {
  if (!isMysql(knex)) return null;
  const [rows] = (await knex.raw(`SELECT DISTINCT customer_name AS name FROM invoices WHERE directory = ? LIMIT ${NAMES_READ_AT_MOST + 1}`, [
    directory,
  ])) as unknown as [Array<{ name: string }>];
  if (rows.length > NAMES_READ_AT_MOST) return null;
  const wanted = indexFold(fragment).join('');
  const names = rows.map((row) => row.name).filter((name) => indexFold(name).join('').includes(wanted));
  return names.length > NAMES_MATCHED_AT_MOST ? null : names;
}
