import type { Knex } from 'knex';
import { isMysql } from '../sql-dialect.js';

/** Money: exact decimals (mysql2 reads them as strings; the mappers make numbers). Timestamps are BIGINT Unix seconds. */
const AMOUNT = [15, 2] as const;

/**
 * InnoDB and utf8mb4_unicode_ci on MariaDB/MySQL: text compares case- and
 * accent-insensitively, which the list filters rely on. Ids that name a
 * tenant or an object key compare exactly (utf8mb4_bin).
 */
function mysqlTable(knex: Knex, table: Knex.CreateTableBuilder): void {
  if (!isMysql(knex)) return;
  table.engine('InnoDB');
  table.charset('utf8mb4');
  table.collate('utf8mb4_unicode_ci');
}

function exactString(table: Knex.CreateTableBuilder, name: string, length: number): Knex.ColumnBuilder {
  return table.string(name, length).collate('utf8mb4_bin');
}

function amount(table: Knex.CreateTableBuilder, name: string): Knex.ColumnBuilder {
  return table.decimal(name, AMOUNT[0], AMOUNT[1]).notNullable();
}

function jsonText(table: Knex.CreateTableBuilder, name: string): Knex.ColumnBuilder {
  return table.text(name, 'mediumtext').notNullable();
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('clients', (t) => {
    mysqlTable(knex, t);
    t.increments('id');
    exactString(t, 'directory', 128).notNullable().unique('clients_directory_unique');
    t.string('name', 255).notNullable();
    t.string('api_key_hash', 64).notNullable();
    t.string('company_name', 255).notNullable();
    t.text('company_address').notNullable();
    t.string('company_vat', 64).notNullable();
    t.string('company_bank_account', 64).notNullable();
    t.string('company_bank_name', 255).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });

  await knex.schema.createTable('file_categories', (t) => {
    mysqlTable(knex, t);
    t.increments('id');
    t.string('name', 100).notNullable();
    t.tinyint('visible_customer').notNullable().defaultTo(0);
  });

  await knex.schema.createTable('orders', (t) => {
    mysqlTable(knex, t);
    t.increments('id');
    exactString(t, 'directory', 128).notNullable().references('directory').inTable('clients');
    t.string('nr', 100).notNullable();
    t.string('ownnr', 100).notNullable();
    t.index(['directory', 'nr', 'id'], 'orders_directory_nr_index');
  });

  await knex.schema.createTable('order_files', (t) => {
    mysqlTable(knex, t);
    t.increments('id');
    exactString(t, 'directory', 128).notNullable();
    t.integer('order_id').unsigned().notNullable().references('id').inTable('orders');
    t.integer('category_id').unsigned().nullable().references('id').inTable('file_categories');
    t.string('name', 255).notNullable();
    t.bigInteger('size').notNullable();
    t.string('content_type', 127).notNullable();
    t.string('sha256', 64).notNullable();
    exactString(t, 'storage_key', 255).notNullable().unique('order_files_storage_key_unique');
    t.bigInteger('created_at').notNullable();
    t.index(['directory', 'order_id', 'id'], 'order_files_directory_order_index');
  });

  await knex.schema.createTable('invoices', (t) => {
    mysqlTable(knex, t);
    t.increments('id');
    exactString(t, 'directory', 128).notNullable().references('directory').inTable('clients');
    t.string('nr', 100).notNullable();
    t.string('type', 1).notNullable();
    t.string('status', 16).notNullable();
    t.integer('branch_id').notNullable();
    t.bigInteger('issue_date').notNullable();
    t.bigInteger('service_date').notNullable();
    t.bigInteger('payment_term').notNullable();
    t.bigInteger('payment_date').nullable();
    t.string('customer_name', 255).notNullable();
    t.string('customer_vat', 64).notNullable();
    t.string('customer_country', 2).notNullable();
    t.text('customer_address').notNullable();
    t.string('currency', 3).notNullable();
    amount(t, 'amount_net');
    amount(t, 'amount_tax');
    amount(t, 'amount_gross');
    amount(t, 'paid');
    amount(t, 'left_to_pay');
    // No foreign key: a fixture may name a correction before the corrected invoice; reads join within the directory.
    t.integer('correct_of_id').unsigned().nullable();
    t.bigInteger('added_time').notNullable();
    // Every sort field per directory (the tie-break id last), so a page is an index range scan;
    // the date filters and the total count use the same indexes.
    for (const column of [
      'issue_date',
      'service_date',
      'payment_term',
      'payment_date',
      'added_time',
      'nr',
      'customer_name',
      'amount_gross',
      'amount_net',
      'amount_tax',
    ]) {
      t.index(['directory', column, 'id'], `invoices_directory_${column}_index`);
    }
    t.index(['directory', 'customer_vat'], 'invoices_directory_customer_vat_index');
    t.index(['directory', 'status', 'issue_date'], 'invoices_directory_status_index');
  });

  await knex.schema.createTable('invoice_orders', (t) => {
    mysqlTable(knex, t);
    t.integer('invoice_id').unsigned().notNullable().references('id').inTable('invoices').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.string('type', 32).notNullable();
    t.string('nr', 100).notNullable();
    t.string('cmr', 100).notNullable();
    jsonText(t, 'tasks');
    jsonText(t, 'files');
    jsonText(t, 'contacts');
    t.primary(['invoice_id', 'position']);
  });

  await knex.schema.createTable('invoice_items', (t) => {
    mysqlTable(knex, t);
    t.integer('invoice_id').unsigned().notNullable().references('id').inTable('invoices').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.string('name', 500).notNullable();
    t.decimal('quantity', 15, 3).notNullable();
    t.string('unit', 32).notNullable();
    t.decimal('unit_price_net', 15, 4).notNullable();
    t.string('tax_rate', 16).notNullable();
    amount(t, 'amount_net');
    amount(t, 'amount_tax');
    amount(t, 'amount_gross');
    t.primary(['invoice_id', 'position']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['invoice_items', 'invoice_orders', 'invoices', 'order_files', 'orders', 'file_categories', 'clients']) {
    await knex.schema.dropTableIfExists(table);
  }
}
