import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnexFileCategoryRepository, KnexOrderRepository, loadFixtures, Sha256ApiKeyHasher } from '@logi/adapters';
import { openTestDatabase, PROFILES, type TestDatabase } from './knex-test-databases.js';
import { NORTH, repositoryFixture, SOUTH } from './knex-repository.fixture.js';

describe.each(PROFILES)('KnexOrderRepository and KnexFileCategoryRepository on %s', (profile) => {
  let db: TestDatabase;
  let orders: KnexOrderRepository;
  const firstId = async (fragment: string, directory = NORTH) => (await orders.findFirstByNr(directory, fragment))?.id ?? null;

  beforeAll(async () => {
    db = await openTestDatabase(profile, 'orders');
    await loadFixtures(db.knex, repositoryFixture, { hasher: new Sha256ApiKeyHasher() });
    orders = new KnexOrderRepository(db.knex);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('when an order is fetched by id, then only within its directory', async () => {
    expect(await orders.findById(NORTH, 12)).toEqual({ id: 12, directory: NORTH, nr: 'BH/2026/0412', ownnr: 'PO-2' });
    expect(await orders.findById(SOUTH, 12)).toBeNull();
    expect(await orders.findById(NORTH, 999)).toBeNull();
  });

  it('when a fragment matches several orders, then the lowest id wins', async () => {
    expect(await firstId('0412')).toBe(11);
    expect(await firstId('2026/04')).toBe(11);
  });

  it('when one order matches exactly (ignoring case), then it wins over lower ids', async () => {
    expect(await firstId('bh/2026/0412')).toBe(12);
    expect(await firstId('BH/2026/0412X')).toBe(13);
    expect(await orders.findFirstByNr(NORTH, 'bh/2026/0412')).toEqual({ id: 12, directory: NORTH, nr: 'BH/2026/0412', ownnr: 'PO-2' });
  });

  it('when the fragment holds %, _ or \\, then they are plain characters', async () => {
    expect(await firstId('%')).toBe(14);
    expect(await firstId('_')).toBe(14);
    expect(await firstId('\\')).toBe(14);
    expect(await firstId('D%_\\C')).toBe(14);
    // As wildcards these would find WILDxyCARD (15).
    expect(await firstId('WILD__CARD')).toBeNull();
    expect(await firstId('WILD%CARD')).toBeNull();
  });

  it('when the fragment differs in the case of non-ASCII letters, then it still matches', async () => {
    expect(await firstId('łódź')).toBe(16);
    expect(await firstId('ŁÓDŹ/77')).toBe(16);
  });

  it("when nothing matches or the order is another directory's, then null", async () => {
    expect(await firstId('no-such-order')).toBeNull();
    expect(await firstId('0412', SOUTH)).toBe(10);
    expect(await firstId('WILD', SOUTH)).toBeNull();
  });

  it('when categories are listed, then all of them by id, shared by every directory', async () => {
    const categories = new KnexFileCategoryRepository(db.knex);
    expect(await categories.list()).toEqual([
      { id: 1, name: 'CMR', visibleCustomer: 1 },
      { id: 2, name: 'Internal', visibleCustomer: 0 },
    ]);
    expect(await categories.findById(2)).toEqual({ id: 2, name: 'Internal', visibleCustomer: 0 });
    expect(await categories.findById(3)).toBeNull();
  });
});
