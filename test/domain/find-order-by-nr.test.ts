import { describe, expect, it } from 'vitest';
import { FindOrderByNrUseCase, OrderNrNotFoundError, ValidationError } from '@logi/domain';
import { FakeOrders } from './fakes.js';

const orders = new FakeOrders([
  { id: 5, directory: 'baltic', nr: 'BH/2026/0412', ownnr: 'PO-1' },
  { id: 3, directory: 'baltic', nr: 'bh/2026/0412-b', ownnr: 'PO-2' },
  { id: 7, directory: 'alpine', nr: 'BH/2026/0412', ownnr: 'X' },
]);
const useCase = new FindOrderByNrUseCase({ orders });
const find = (qs: string) => useCase.execute({ directory: 'baltic', query: new URLSearchParams(qs) });

describe('find order by nr', () => {
  it('when an exact match exists, then it wins over a lower id', async () => {
    expect(await find('nr=bh/2026/0412')).toMatchObject({ id: 5 });
  });

  it('when only fragments match, then the lowest id wins', async () => {
    expect(await find('nr=2026')).toMatchObject({ id: 3 });
  });

  it('when nr has spaces around it, then it is trimmed', async () => {
    expect(await find('nr=%20%200412-B%20')).toMatchObject({ id: 3 });
  });

  it.each(['', 'nr=', 'nr=%20%20'])('when the query is "%s", then nr is required', async (qs) => {
    const error = await find(qs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toBe('The nr field is required.');
    expect((error as ValidationError).errors).toEqual({ nr: ['The nr field is required.'] });
  });

  it('when nr is sent twice, then it is invalid', async () => {
    await expect(find('nr=a&nr=b')).rejects.toBeInstanceOf(ValidationError);
    await expect(find('nr[]=a')).rejects.toBeInstanceOf(ValidationError);
  });

  it('when nothing matches, then the message names the trimmed nr', async () => {
    const error = await find('nr=%20NOPE%20').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OrderNrNotFoundError);
    expect((error as Error).message).toBe('Order with given nr (NOPE) not found');
  });

  it('when nr is 255 characters outside the BMP (510 UTF-16 units), then it is looked up: characters are counted by code point, as the document counts them', async () => {
    await expect(find(`nr=${encodeURIComponent('😀'.repeat(255))}`)).rejects.toBeInstanceOf(OrderNrNotFoundError);
    const error = await find(`nr=${encodeURIComponent('😀'.repeat(256))}`).catch((e: unknown) => e);
    expect((error as ValidationError).errors).toEqual({ nr: ['The nr field must not be greater than 255 characters.'] });
  });

  it('when the order belongs to another directory, then it is not found', async () => {
    await expect(useCase.execute({ directory: 'alpine', query: new URLSearchParams('nr=-b') })).rejects.toBeInstanceOf(OrderNrNotFoundError);
  });
});
