import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.stop();
});

const byNr = (query: string, as: 'baltic' | 'alpine' = 'baltic') => api.call(`/orders/by-nr${query}`, { as });

describe('GET /orders/file-categories', () => {
  it('when asked, then every category is listed with its flag', async () => {
    const response = await api.call('/orders/file-categories');
    expect(response.status).toBe(200);
    expect(await envelopeOf(response)).toEqual({
      status: 200,
      message: 'OK',
      data: [
        { id: 1, name: 'CMR', visible_customer: 1 },
        { id: 2, name: 'Delivery note', visible_customer: 1 },
        { id: 3, name: 'Internal', visible_customer: 0 },
      ],
    });
  });

  it('when another client asks, then the list is the same (shared by all clients)', async () => {
    const a = await envelopeOf(await api.call('/orders/file-categories', { as: 'alpine' }));
    expect(a.data).toHaveLength(3);
  });
});

describe('GET /orders/by-nr', () => {
  it('when the nr matches exactly in another case, then that order wins over a lower id', async () => {
    const body = await envelopeOf(await byNr('?nr=BH/2026/0412-b'));
    expect(body).toEqual({ status: 200, message: 'OK', data: { id: 3002, nr: 'bh/2026/0412-B', ownnr: 'PO-55-2' } });
  });

  it('when a fragment matches several orders, then the lowest id wins', async () => {
    expect((await envelopeOf(await byNr('?nr=2026/04'))).data.id).toBe(3001);
  });

  it('when nr is padded with spaces, then it is trimmed', async () => {
    expect((await envelopeOf(await byNr('?nr=%20%200412-B%20'))).data.id).toBe(3002);
  });

  it('when nr holds % _ and \\, then they are literal characters', async () => {
    expect((await envelopeOf(await byNr(`?nr=${encodeURIComponent('%_\\')}`))).data.id).toBe(3003);
    const underscore = await byNr(`?nr=${encodeURIComponent('WILD__CARD')}`);
    expect(underscore.status).toBe(404);
    const percent = await byNr(`?nr=${encodeURIComponent('WILD%CARD')}`);
    expect(percent.status).toBe(404);
  });

  it('when nr differs only by Unicode case, then it still matches', async () => {
    expect((await envelopeOf(await byNr(`?nr=${encodeURIComponent('łódź')}`))).data.id).toBe(3004);
  });

  it('when nothing matches, then 404 names the trimmed nr', async () => {
    const response = await byNr('?nr=%20NOPE-1%20');
    expect(response.status).toBe(404);
    expect(await envelopeOf(response)).toEqual({ status: 404, message: 'Order with given nr (NOPE-1) not found', data: null });
  });

  it('when the order belongs to another client, then it is not found', async () => {
    expect((await byNr('?nr=AL/2026/0001')).status).toBe(404);
    expect((await envelopeOf(await byNr('?nr=AL/2026/0001', 'alpine'))).data.id).toBe(4001);
  });

  it.each(['', '?nr=', '?nr=%20%20', '?other=1'])('when the query is "%s", then 422 nr required', async (query) => {
    const response = await byNr(query);
    expect(response.status).toBe(422);
    const body = await envelopeOf(response);
    expect(body.message).toBe('The nr field is required.');
    expect(body.data).toBeNull();
    expect(body.errors).toEqual({ nr: ['The nr field is required.'] });
  });

  it.each(['?nr=a&nr=b', '?nr[]=BH', '?nr[x]=BH'])('when nr is sent as %s, then 422', async (query) => {
    const response = await byNr(query);
    expect(response.status).toBe(422);
    expect((await envelopeOf(response)).errors).toHaveProperty('nr');
  });
});
