import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnexClientRepository, KnexInvoiceRepository } from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';

const company = { name: 'Acme Sp. z o.o.', address: 'ul. Długa 1\nGdańsk', vat: 'PL1', bankAccount: 'PL61 1090', bankName: 'Bank Pekao' };

describe.each(PROFILES)('KnexClientRepository on %s', (profile) => {
  let db: TestDatabase;
  let clients: KnexClientRepository;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'clients');
    clients = new KnexClientRepository(db.knex);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('when a client is created, then it is found by its exact directory (its keys are in api_keys)', async () => {
    const created = await clients.upsert({ directory: 'acme', name: 'ACME', company });
    expect(created).toEqual({ id: expect.any(Number), directory: 'acme', name: 'ACME', company });
    const found = await clients.findByDirectory('acme');
    expect(found).toEqual(created);
  });

  it('when the directory differs only in case, then it is another directory', async () => {
    expect(await clients.findByDirectory('ACME')).toBeNull();
    await clients.upsert({ directory: 'ACME', name: 'Upper', company });
    expect((await clients.findByDirectory('ACME'))?.name).toBe('Upper');
    expect((await clients.findByDirectory('acme'))?.name).toBe('ACME');
  });

  it('when an existing directory is upserted, then name and company are replaced, the id kept', async () => {
    const before = await clients.findByDirectory('acme');
    const updated = await clients.upsert({ directory: 'acme', name: 'ACME 2', company: { ...company, bankName: 'mBank' } });
    expect(updated.id).toBe(before!.id);
    expect(updated.company.bankName).toBe('mBank');
  });

  it('when clients are listed, then every directory once', async () => {
    const list = await clients.list();
    expect(list.map((c) => c.directory).sort()).toEqual(['ACME', 'acme']);
  });

  it("when a client's row changes, then its directory's data version moves on (what is printed as seller is part of that data), and another directory's stays", async () => {
    const invoices = new KnexInvoiceRepository(db.knex);
    await clients.upsert({ directory: 'versioned', name: 'V', company });
    await clients.upsert({ directory: 'versioned-other', name: 'W', company });
    const before = Number(await invoices.dataVersion('versioned'));
    const otherBefore = await invoices.dataVersion('versioned-other');
    await clients.upsert({ directory: 'versioned', name: 'V', company: { ...company, address: 'ul. Nowa 2' } });
    const after = Number(await invoices.dataVersion('versioned'));
    expect(after).toBeGreaterThan(before);
    await db.knex('clients').where({ directory: 'versioned' }).update({ company_bank_name: 'Written straight into the table' });
    expect(Number(await invoices.dataVersion('versioned'))).toBeGreaterThan(after);
    expect(await invoices.dataVersion('versioned-other')).toBe(otherBefore);
  });
});
