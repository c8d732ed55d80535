import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { Tokens } from '@logi/api';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { multipart, PDF_BYTES } from '../support/multipart.js';
import { OpenApiContract, type OpenApiDoc } from '../support/openapi-contract.js';
import { sdkFor } from '../support/sdk-client.js';
import { ApiError } from '@logi/client';

/**
 * `Idempotency-Key` on the JSON routes that create something (contract
 * "`Idempotency-Key`", the extended one): exports, webhook endpoints, file
 * links. Uploads have their own tests (upload-idempotency.test.ts).
 */
let api: TestApi;
let fileId: number;
let otherFileId: number;
let contract: OpenApiContract;

beforeAll(async () => {
  api = await startTestApi(
    {
      // Endpoints point at this machine (no event is made while they exist, so nothing is delivered).
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      EXPORT_MAX_ACTIVE: '50',
      // The kept answer of an endpoint holds its secret, sealed with this key.
      SECRETS_ENCRYPTION_KEYS: `idem:${randomBytes(32).toString('base64')}`,
    },
    { label: 'create-idempotency' },
  );
  const upload = async (label: string) => {
    const { body, contentType } = multipart([
      { name: 'files', filename: `${label}.pdf`, content: Buffer.concat([PDF_BYTES, Buffer.from(`${label} ${randomUUID()}`)]) },
    ]);
    const answer = await envelopeOf(await api.call('/orders/3001/files', { method: 'POST', body, headers: { 'Content-Type': contentType } }));
    return (answer.data as { uploaded: Array<{ id: number }> }).uploaded[0]!.id;
  };
  contract = new OpenApiContract((await (await fetch(`${api.base}/openapi.json`)).json()) as OpenApiDoc);
  fileId = await upload('idempotent-link');
  otherFileId = await upload('idempotent-link-other');
});
afterAll(async () => {
  await api?.stop();
});

const made: string[] = [];
afterEach(async () => {
  for (const path of made.splice(0)) await (await api.call(path, { method: 'DELETE' })).body?.cancel();
});

async function post(path: string, body: unknown, key?: string) {
  const response = await api.call(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    body: JSON.stringify(body),
  });
  const raw = response.clone();
  return { response, raw, envelope: await envelopeOf(response) };
}

interface RouteCase {
  name: string;
  /** The operation's path in the OpenAPI document. */
  documented: string;
  path: () => string;
  /** Another path of the same route (another file), or null. */
  otherPath: () => string | null;
  body: Record<string, unknown>;
  /** The same request with its members in another order. */
  reordered: Record<string, unknown>;
  otherBody: Record<string, unknown>;
  status: number;
  /** What tells one made thing from another: its id, or the link's URL. */
  identity: (data: Record<string, unknown>) => unknown;
  /** How many exist now (links are not listed: null). */
  count: () => Promise<number | null>;
  /** What to DELETE afterwards. */
  cleanup: (data: Record<string, unknown>) => string | null;
  /** A request the route refuses (nothing made), and its status. */
  refused: () => { path: string; body: unknown; status: number };
}

const listed = (path: string) => async () => ((await envelopeOf(await api.call(path))).data as unknown[]).length;

const ROUTES: RouteCase[] = [
  {
    name: 'POST /v1/exports',
    documented: '/exports',
    path: () => '/exports',
    otherPath: () => null,
    body: { documents: ['ubl'], csv: false, lang: 'en' },
    reordered: { lang: 'en', csv: false, documents: ['ubl'] },
    otherBody: { documents: ['cii'], csv: false, lang: 'en' },
    status: 202,
    identity: (data) => data.id,
    count: listed('/exports'),
    cleanup: (data) => `/exports/${String(data.id)}`,
    refused: () => ({ path: '/exports', body: { documents: ['doc'] }, status: 422 }),
  },
  {
    name: 'POST /v1/webhook-endpoints',
    documented: '/webhook-endpoints',
    path: () => '/webhook-endpoints',
    otherPath: () => null,
    body: { url: 'http://127.0.0.1:9/idempotent', description: 'first' },
    reordered: { description: 'first', url: 'http://127.0.0.1:9/idempotent' },
    otherBody: { url: 'http://127.0.0.1:9/idempotent', description: 'second' },
    status: 201,
    identity: (data) => data.id,
    count: listed('/webhook-endpoints'),
    cleanup: (data) => `/webhook-endpoints/${String(data.id)}`,
    refused: () => ({ path: '/webhook-endpoints', body: { url: 'not a url' }, status: 422 }),
  },
  {
    name: 'POST /v1/orders/{order_id}/files/{file_id}/link',
    documented: '/orders/{order_id}/files/{file_id}/link',
    path: () => `/orders/3001/files/${fileId}/link`,
    otherPath: () => `/orders/3001/files/${otherFileId}/link`,
    body: { ttl: 600 },
    reordered: { ttl: 600 },
    otherBody: { ttl: 601 },
    status: 201,
    identity: (data) => data.url,
    count: async () => null,
    cleanup: () => null,
    refused: () => ({ path: `/orders/987654321/files/${fileId}/link`, body: { ttl: 600 }, status: 404 }),
  },
];

const REUSED = 'The Idempotency-Key header was already used for a different request.';

describe.each(ROUTES)('$name with Idempotency-Key', (route) => {
  async function first(key: string) {
    const before = await route.count();
    const { response, envelope } = await post(route.path(), route.body, key);
    expect(response.status, JSON.stringify(envelope)).toBe(route.status);
    expect(response.headers.get('idempotency-replayed')).toBeNull();
    const cleanup = route.cleanup(envelope.data as Record<string, unknown>);
    if (cleanup) made.push(cleanup);
    return { before, response, envelope };
  }

  it('when the same key comes back with the same body (members in any order), then the first answer again, marked replayed, and nothing more is made', async () => {
    const key = randomUUID();
    const { before, response, envelope } = await first(key);
    for (const body of [route.body, route.reordered]) {
      const again = await post(route.path(), body, key);
      expect(again.response.status).toBe(route.status);
      expect(again.response.headers.get('idempotency-replayed')).toBe('true');
      expect(again.envelope).toEqual(envelope);
      expect(route.identity(again.envelope.data as Record<string, unknown>)).toBe(route.identity(envelope.data as Record<string, unknown>));
      expect(again.response.headers.get('location')).toBe(response.headers.get('location'));
    }
    const replayed = await post(route.path(), route.body, key);
    expect(await contract.expectDocumented(replayed.raw, 'post', route.documented)).toBeDefined();
    expect(contract.operation('post', route.documented).responses[String(route.status)]!.headers).toHaveProperty('Idempotency-Replayed');
    if (before !== null) expect(await route.count()).toBe(before + 1);
    // Without the key, the same body makes another one.
    const fresh = await post(route.path(), route.body);
    expect(fresh.response.status).toBe(route.status);
    const cleanup = route.cleanup(fresh.envelope.data as Record<string, unknown>);
    if (cleanup) made.push(cleanup);
    expect(fresh.response.headers.get('idempotency-replayed')).toBeNull();
    // (A link made again in the same second is the same URL: its token signs the same claims.)
    if (before !== null)
      expect(route.identity(fresh.envelope.data as Record<string, unknown>)).not.toEqual(route.identity(envelope.data as Record<string, unknown>));
  });

  it('when the same key comes with another body, another path or another route, then 422 naming Idempotency-Key and nothing is made', async () => {
    const key = randomUUID();
    const { before } = await first(key);
    const expected = { status: 422, message: REUSED, data: null, errors: { 'Idempotency-Key': [REUSED] } };
    expect((await post(route.path(), route.otherBody, key)).envelope).toEqual(expected);
    expect(await contract.expectDocumented((await post(route.path(), route.otherBody, key)).raw, 'post', route.documented)).toEqual(expected);
    const otherPath = route.otherPath();
    if (otherPath) expect((await post(otherPath, route.body, key)).envelope).toEqual(expected);
    const otherRoute = ROUTES.find((other) => other !== route)!;
    expect((await post(otherRoute.path(), otherRoute.body, key)).envelope).toEqual(expected);
    if (before !== null) expect(await route.count()).toBe(before + 1);
  });

  it.each([
    ['256 characters', 'k'.repeat(256), 'The Idempotency-Key header must not be greater than 255 characters.'],
    ['a space', 'two words', 'The Idempotency-Key header must contain only visible ASCII characters.'],
    ['a non-ASCII byte', 'key\u00e9', 'The Idempotency-Key header must contain only visible ASCII characters.'],
  ])('when the key has %s, then 422 naming Idempotency-Key and nothing is made', async (_name, key, message) => {
    const before = await route.count();
    const { envelope } = await post(route.path(), route.body, key);
    expect(envelope).toEqual({ status: 422, message, data: null, errors: { 'Idempotency-Key': [message] } });
    expect(await route.count()).toBe(before);
    const parameter = contract.operation('post', route.documented).parameters?.find((p) => p.name === 'Idempotency-Key');
    expect(parameter).toMatchObject({ in: 'header', schema: { maxLength: 255 } });
  });

  it('when a key of 255 visible characters is sent, then it is taken', async () => {
    const key = `${randomUUID()}!~`.padEnd(255, 'x');
    await first(key);
    expect((await post(route.path(), route.body, key)).response.headers.get('idempotency-replayed')).toBe('true');
  });

  it('when the same request with one key is sent several times at once, then one makes it, the others get its answer or 409, and it is made once', async () => {
    const key = randomUUID();
    const before = await route.count();
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(route.path(), route.body, key)));
    const made201 = answers.filter((a) => a.response.status === route.status);
    for (const answer of answers) {
      if (answer.response.status === 409) {
        expect(contract.documentedResponse('post', route.documented, 409)).toBeDefined();
        expect(answer.response.headers.get('retry-after')).toBe('1');
        expect(answer.envelope.message).toBe('A request with this Idempotency-Key is still being processed; try again shortly.');
      } else expect(answer.response.status, JSON.stringify(answer.envelope)).toBe(route.status);
    }
    expect(made201.length).toBeGreaterThanOrEqual(1);
    const identities = new Set(made201.map((a) => route.identity(a.envelope.data as Record<string, unknown>)));
    expect(identities.size).toBe(1);
    expect(made201.filter((a) => a.response.headers.get('idempotency-replayed') === null)).toHaveLength(1);
    const cleanup = route.cleanup(made201[0]!.envelope.data as Record<string, unknown>);
    if (cleanup) made.push(cleanup);
    if (before !== null) expect(await route.count()).toBe(before + 1);
    // Afterwards every retry gets the kept answer.
    const later = await post(route.path(), route.body, key);
    expect(later.response.headers.get('idempotency-replayed')).toBe('true');
    expect(route.identity(later.envelope.data as Record<string, unknown>)).toEqual([...identities][0]);
  });

  it('when the first request is refused (404, 422), then nothing is kept and a retry with the key runs anew', async () => {
    const key = randomUUID();
    const { path, body, status } = route.refused();
    const refused = await post(path, body, key);
    expect(refused.response.status, JSON.stringify(refused.envelope)).toBe(status);
    expect(Object.keys(refused.envelope.errors ?? {})).not.toContain('Idempotency-Key');
    const retried = await post(path, body, key);
    expect(retried.envelope).toEqual(refused.envelope);
    expect(retried.response.headers.get('idempotency-replayed')).toBeNull();
    // The key was not used up: the good request takes it.
    await first(key);
  });
});

describe('a file link with a malformed Idempotency-Key', () => {
  it("when the order or the file is not the caller's, then 404 comes before the key's 422 (contract precedence)", async () => {
    for (const [path, message] of [
      [`/orders/987654321/files/${fileId}/link`, 'Order not found'],
      ['/orders/1.5/files/1/link', 'Order not found'],
      ['/orders/3001/files/987654321/link', 'File not found'],
    ] as const) {
      const { envelope } = await post(path, { ttl: 600 }, 'a b');
      expect({ status: envelope.status, message: envelope.message }).toEqual({ status: 404, message });
    }
    const { envelope } = await post(`/orders/3001/files/${fileId}/link`, { ttl: 600 }, 'a b');
    expect(envelope.status).toBe(422);
    expect(Object.keys(envelope.errors ?? {})).toEqual(['Idempotency-Key']);
  });
});

describe('the kept answer of a webhook endpoint', () => {
  it('when its create is retried, then the same secret comes back, and the kept answer holds it only sealed', async () => {
    const key = randomUUID();
    const created = await post('/webhook-endpoints', { url: 'http://127.0.0.1:9/sealed' }, key);
    expect(created.response.status).toBe(201);
    const { id, secret } = created.envelope.data as { id: number; secret: string };
    made.push(`/webhook-endpoints/${id}`);
    expect(secret).toMatch(/^whsec_/);
    const again = await post('/webhook-endpoints', { url: 'http://127.0.0.1:9/sealed' }, key);
    expect(again.response.headers.get('cache-control')).toBe('no-store');
    expect(again.envelope.data).toMatchObject({ id, secret });

    const kept = await keptAnswers();
    expect(kept.length).toBeGreaterThan(0);
    const secretPart = secret.slice('whsec_'.length);
    for (const record of kept) expect(record).not.toContain(secretPart);
    expect(kept.some((record) => record.includes('sealed'))).toBe(true);
  });
});

describe('the SDK', () => {
  it('when a create is called again with the same idempotencyKey, then it resolves with the same thing; with another body it throws the 422', async () => {
    const sdk = sdkFor(api, 'baltic');
    const key = () => `sdk-${randomUUID()}`;

    const exportKey = key();
    const exported = await sdk.exports.create({ documents: ['ubl'], csv: false }, { idempotencyKey: exportKey });
    made.push(`/exports/${exported.id}`);
    expect((await sdk.exports.create({ documents: ['ubl'], csv: false }, { idempotencyKey: exportKey })).id).toBe(exported.id);

    const endpointKey = key();
    const endpoint = await sdk.webhooks.create({ url: 'http://127.0.0.1:9/sdk' }, { idempotencyKey: endpointKey });
    made.push(`/webhook-endpoints/${endpoint.id}`);
    expect(await sdk.webhooks.create({ url: 'http://127.0.0.1:9/sdk' }, { idempotencyKey: endpointKey })).toEqual(endpoint);

    const linkKey = key();
    const link = await sdk.files.link(3001, fileId, { ttl: 300, idempotencyKey: linkKey });
    expect(await sdk.files.link(3001, fileId, { ttl: 300, idempotencyKey: linkKey })).toEqual(link);
    const error = (await sdk.files.link(3001, fileId, { ttl: 301, idempotencyKey: linkKey }).catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect({ status: error.status, errors: error.errors }).toEqual({ status: 422, errors: { 'Idempotency-Key': [REUSED] } });
  });
});

/** Every kept Idempotency-Key record as stored: rows of the table, or values in Redis. */
async function keptAnswers(): Promise<string[]> {
  if (PROFILE === 'embedded') {
    const rows = await api.knex<{ answer: string | null }>('idempotency_keys').select('answer');
    return rows.map((row) => row.answer ?? '');
  }
  const redis = api.container.get<Redis>(Tokens.Redis);
  const keys = await redis.keys(`${api.config.redisPrefix}:idempotency:*`);
  return Promise.all(keys.map(async (key) => (await redis.get(key)) ?? ''));
}
