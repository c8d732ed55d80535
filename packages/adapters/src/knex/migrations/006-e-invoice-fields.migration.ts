import type { Knex } from 'knex';

/**
 * The optional e-invoice fields of the fixture format (docs/integrate/e-invoices.md#defaults-for-what-the-fixtures-do-not-hold): an item's UN/ECE unit code, EN 16931 VAT category and
 * exemption reason, and the client company's country code. Null means "use
 * the documented default", so every existing row keeps its meaning.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invoice_items', (t) => {
    t.string('unit_code', 3).nullable();
    t.string('tax_category', 2).nullable();
    t.string('tax_exemption_reason', 500).nullable();
  });
  await knex.schema.alterTable('clients', (t) => {
    t.string('company_country', 2).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invoice_items', (t) => {
    t.dropColumn('unit_code');
    t.dropColumn('tax_category');
    t.dropColumn('tax_exemption_reason');
  });
  await knex.schema.alterTable('clients', (t) => {
    t.dropColumn('company_country');
  });
}
