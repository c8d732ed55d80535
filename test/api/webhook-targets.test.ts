import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf, startTestApi, type TestApi } from '../support/api-harness.js';
import { forbiddenHost, publicHost, urlWith } from '../support/hostile-webhook-urls.js';

/**
 * The SSRF rules at the API, with private targets not allowed (the
 * default): generated spellings of every non-public address and of
 * localhost are 422 on `url`; public addresses are accepted.
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { label: 'hook-targets' });
});
afterAll(async () => {
  await api?.stop();
});

function register(url: string) {
  return api.call('/webhook-endpoints', { method: 'POST', body: JSON.stringify({ url }), headers: { 'Content-Type': 'application/json' } });
}

describe('POST /v1/webhook-endpoints without WEBHOOK_ALLOW_PRIVATE_TARGETS', () => {
  it('when the url names a loopback, private, link-local, metadata or other non-public host in any spelling, then 422 on url and nothing is stored', async () => {
    await fc.assert(
      fc.asyncProperty(urlWith(forbiddenHost), async (url) => {
        const answer = await envelopeOf(await register(url));
        expect(answer.status, url).toBe(422);
        expect(answer.errors, url).toEqual({ url: ['The url must not point to a private, loopback or link-local address.'] });
      }),
      { seed: 1802, numRuns: 120 },
    );
    expect(await api.knex('webhook_endpoints').count({ n: '*' })).toEqual([{ n: 0 }]);
  });

  it.each([
    'http://hooks.example.com/x',
    'https://localhost/x',
    'https://LOCALHOST./x',
    'https://metadata.localhost../x',
    'https://169.254.169.254/latest/meta-data/',
    'https://[fd00:ec2::254]/',
    'https://2130706433/',
    'https://0x7f.1/',
    'https://[::ffff:127.0.0.1]/',
  ])('when the url is %s, then 422 on url', async (url) => {
    const answer = await envelopeOf(await register(url));
    expect(answer.status).toBe(422);
    expect(Object.keys(answer.errors ?? {})).toEqual(['url']);
  });

  it('when the url names a public address, then the endpoint is created', async () => {
    await fc.assert(
      fc.asyncProperty(urlWith(publicHost), async (url) => {
        const answer = await envelopeOf(await register(url));
        expect(answer.status, url).toBe(201);
        await api.call(`/webhook-endpoints/${answer.data.id}`, { method: 'DELETE' });
      }),
      { seed: 1803, numRuns: 30 },
    );
  });
});
