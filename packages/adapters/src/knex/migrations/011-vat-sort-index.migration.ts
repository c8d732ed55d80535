import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/**
 * A VAT filter reads its invoices through (directory, customer_vat) and had to
 * sort them for a page: 283 ms at a million invoices for a VAT on 7,082 of
 * them (23x its time at 10k; docs/benchmarks.md#query-latency-against-rows). With the default sort's columns
 * after the VAT the index hands out one VAT's invoices already in page order
 * (backwards for the default `desc`), so a page reads its own rows only. It
 * replaces the old index, whose every use this one serves too. SQLite matches
 * VATs through `ufold(customer_vat)` (migration 002), which this does not
 * touch.
 */
export async function up(knex: Knex): Promise<void> {
  if (!isMysql(knex)) return;
  await knex.raw(
    'ALTER TABLE invoices DROP INDEX invoices_directory_customer_vat_index, ' +
      'ADD INDEX invoices_directory_customer_vat_index (directory, customer_vat, issue_date, id)',
  );
}

export async function down(knex: Knex): Promise<void> {
  if (!isMysql(knex)) return;
  await knex.raw(
    'ALTER TABLE invoices DROP INDEX invoices_directory_customer_vat_index, ADD INDEX invoices_directory_customer_vat_index (directory, customer_vat)',
  );
}
