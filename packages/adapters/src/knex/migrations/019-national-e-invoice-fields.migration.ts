import type { Knex } from 'knex';

/**
 * The optional fixture fields of the national e-invoices (fixtures-format.md, docs/integrate/e-invoices.md#national-e-invoices):
 * the seller's contact person and county, the buyer's county, the buyer reference, the exchange rate to the seller's
 * national currency and the KSeF number. Null means "not given", so every existing row keeps its meaning.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.string('company_contact_name', 255).nullable();
    t.string('company_contact_phone', 64).nullable();
    t.string('company_contact_email', 255).nullable();
    t.string('company_county', 6).nullable();
  });
  await knex.schema.alterTable('invoices', (t) => {
    t.string('customer_county', 6).nullable();
    t.string('buyer_reference', 200).nullable();
    t.decimal('exchange_rate', 16, 6).nullable();
    t.string('ksef_number', 35).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.dropColumn('company_contact_name');
    t.dropColumn('company_contact_phone');
    t.dropColumn('company_contact_email');
    t.dropColumn('company_county');
  });
  await knex.schema.alterTable('invoices', (t) => {
    t.dropColumn('customer_county');
    t.dropColumn('buyer_reference');
    t.dropColumn('exchange_rate');
    t.dropColumn('ksef_number');
  });
}
