import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { Knex } from 'knex';
import { KnexApiKeyRepository, migrateLatest, migrateUpTo, Sha256ApiKeyHasher } from '@logi/adapters';
import { loadConfig } from '@logi/config';
import { buildContainer, startServer, Tokens } from '@logi/api';
import type { ApiKeyScope } from '@logi/domain';
import { envelopeOf, PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';
import { DIRS, KEYS } from '../support/test-fixture.js';
import { OpenApiContract, type OpenApiDoc } from '../support/openapi-contract.js';
import { cli } from '../support/cli-runner.js';
import { ApiError, createClient } from '@logi/client';
import { openTestDatabase } from '../adapters/knex-test-databases.js';
import { withTestSecretKey } from '../support/test-secret-key.js';

const hasher = new Sha256ApiKeyHasher();
const SCOPES: ApiKeyScope[] = ['read', 'write', 'webhooks'];
const now = () => Math.floor(Date.now() / 1000);

/**
 * The contract's rule, stated here on its own so the server's (and the
 * document's) can be checked against it: `webhooks` for every route under
 * /webhook-endpoints, reads included; `write` for uploads and exports made or
 * deleted; `read` for every other GET and HEAD and for file links; creating,
 * changing and replaying an endpoint need `webhooks` and `read`. In the order
 * a missing one is named: read, write, webhooks.
 */
function contractScopes(method: string, path: string): ApiKeyScope[] {
  const m = method.toLowerCase();
  if (path === '/webhook-endpoints' || path.startsWith('/webhook-endpoints/')) {
    const sendsDataOut =
      (m === 'post' && path === '/webhook-endpoints') || (m === 'patch' && path === '/webhook-endpoints/{endpoint_id}') || path.endsWith('/replay');
    return sendsDataOut ? ['read', 'webhooks'] : ['webhooks'];
  }
  if (m === 'get' || m === 'head' || (m === 'post' && path.endsWith('/link'))) return ['read'];
  return ['write'];
}

/** A request of an operation that no id of this test exists for: a key with the scope meets 404/422, never a write. */
function callOf(path: string): string {
  return path.replace(/\{[a-z_]+\}/g, '987654321') + (path === '/orders/by-nr' ? '?nr=none' : '');
}

let api: TestApi;
let contract: OpenApiContract;
let keys: KnexApiKeyRepository;

/** A new key of the baltic directory with these scopes (and expiry); the key itself. */
async function makeKey(scopes: ApiKeyScope[], options: { expires?: number | null; name?: string } = {}): Promise<{ key: string; id: number }> {
  const key = hasher.generate();
  const stored = await keys.create({
    directory: DIRS.baltic,
    name: options.name ?? `test ${scopes.join('+')}`,
    keyHash: hasher.hash(key),
    scopes,
    created: now(),
    expires: options.expires ?? null,
  });
  return { key, id: stored.id };
}

function withKey(key: string, directory: string = DIRS.baltic): Record<string, string> {
  return { Authorization: `Bearer ${key}`, 'X-Client-Directory': directory };
}

/** Every operation of the published document, and HEAD beside each GET. */
function operations(): Array<{ method: string; path: string; scopes: ApiKeyScope[] }> {
  return Object.entries(contract.doc.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, operation]) => {
      // Public operations take no key (their only one is the file link, checked below).
      if (((operation as { security?: unknown[] }).security ?? null)?.length === 0) return [];
      const scopes = (operation as { 'x-required-scopes'?: ApiKeyScope[] })['x-required-scopes']!;
      return method === 'get'
        ? [
            { method, path, scopes },
            { method: 'head', path, scopes },
          ]
        : [{ method, path, scopes }];
    }),
  );
}

beforeAll(async () => {
  // Endpoints point at this machine (nothing is ever delivered: no event is made for them).
  api = await startTestApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, { label: 'api-keys' });
  contract = new OpenApiContract((await (await fetch(`${api.base}/openapi.json`)).json()) as OpenApiDoc);
  keys = new KnexApiKeyRepository(api.knex);
});
afterAll(async () => {
  await api?.stop();
});

describe('scopes, route by route (every operation of the OpenAPI document)', () => {
  it('when the document is read, then every operation states the scopes the contract gives it, and a 403 naming each', () => {
    const listed = operations().filter((op) => op.method !== 'head');
    expect(listed.length).toBeGreaterThanOrEqual(14);
    for (const { method, path, scopes } of listed) {
      expect(scopes, `${method} ${path}`).toEqual(contractScopes(method, path));
      const forbidden = contract.operation(method, path).responses['403'];
      const message = (forbidden?.content?.['application/json']?.schema as { allOf: Array<{ properties?: { message?: { const?: string; enum?: string[] } } }> })
        .allOf[1]!.properties!.message!;
      expect(message.enum ?? [message.const], `${method} ${path}`).toEqual(scopes.map((scope) => `This API key lacks the ${scope} scope.`));
    }
    // The one public operation: a file link, whose token is its credential.
    const publicOperations = Object.entries(contract.doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => ((operation as { security?: unknown[] }).security ?? null)?.length === 0)
        .map(([method]) => `${method} ${path}`),
    );
    expect(publicOperations).toEqual(['get /file-links/{token}']);
    // The contract names these; the rule must give them so, whoever adds the routes.
    const stated = (method: string, path: string) => operations().find((op) => op.method === method && op.path === path)?.scopes;
    for (const [method, path, scopes] of [
      ['post', '/orders/{order_id}/files', ['write']],
      ['post', '/orders/{order_id}/files/{file_id}/link', ['read']],
      ['post', '/exports', ['write']],
      ['delete', '/exports/{export_id}', ['write']],
      ['get', '/exports/{export_id}/download', ['read']],
      ['get', '/webhook-endpoints', ['webhooks']],
      ['post', '/webhook-endpoints', ['read', 'webhooks']],
      ['patch', '/webhook-endpoints/{endpoint_id}', ['read', 'webhooks']],
      ['post', '/webhook-endpoints/{endpoint_id}/replay', ['read', 'webhooks']],
      ['post', '/webhook-endpoints/{endpoint_id}/rotate-secret', ['webhooks']],
      ['delete', '/webhook-endpoints/{endpoint_id}', ['webhooks']],
      ['get', '/webhook-endpoints/{endpoint_id}/deliveries', ['webhooks']],
    ] as const) {
      expect(contractScopes(method, path), `${method} ${path}`).toEqual(scopes);
      expect(stated(method, path), `${method} ${path}`).toEqual(scopes);
    }
  });

  it('when a key lacks exactly one scope an operation needs, then it is 403 naming that scope, as documented; with only the scopes it needs it passes the check', async () => {
    const allBut = Object.fromEntries(await Promise.all(SCOPES.map(async (s) => [s, (await makeKey(SCOPES.filter((x) => x !== s))).key] as const)));
    const exactly = new Map<string, string>();
    const keyWith = async (scopes: ApiKeyScope[]) => {
      const name = scopes.join('+');
      if (!exactly.has(name)) exactly.set(name, (await makeKey(scopes)).key);
      return exactly.get(name)!;
    };
    const before = await api.objectKeys();
    for (const { method, path, scopes } of operations()) {
      const init = (key: string): RequestInit => ({
        method: method.toUpperCase(),
        headers: { ...withKey(key), ...(method === 'get' || method === 'head' ? {} : { 'Content-Type': 'application/json' }) },
        ...(method === 'get' || method === 'head' ? {} : { body: '"not an object"' }),
      });
      for (const scope of scopes) {
        const refused = await fetch(`${api.base}${callOf(path)}`, init(allBut[scope]!));
        expect(refused.status, `${method} ${path} without ${scope}`).toBe(403);
        if (method !== 'head') {
          expect(await contract.expectDocumented(refused.clone(), method, path)).toBeDefined();
          expect(await envelopeOf(refused)).toEqual({ status: 403, message: `This API key lacks the ${scope} scope.`, data: null });
        }
      }
      const allowed = await fetch(`${api.base}${callOf(path)}`, init(await keyWith(scopes)));
      expect(allowed.status, `${method} ${path} with only ${scopes.join('+')}`).not.toBe(403);
      expect(allowed.status, `${method} ${path} with only ${scopes.join('+')}`).not.toBe(401);
      await allowed.body?.cancel();
    }
    expect(await api.objectKeys()).toEqual(before);
  });

  it('when the path is written in another letter case, then the route still needs its own scope (read from the route, not the raw path)', async () => {
    const { key } = await makeKey(['read', 'write']);
    const response = await fetch(`${api.base.replace('/v1', '/V1')}/Webhook-Endpoints`, {
      method: 'POST',
      headers: { ...withKey(key), 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(403);
    expect((await envelopeOf(response)).message).toBe('This API key lacks the webhooks scope.');
  });

  it('when the fixture keys (made before scopes existed in the data) are used, then they hold every scope', async () => {
    for (const [path, init] of [
      ['/invoices', {}],
      ['/webhook-endpoints', {}],
      ['/orders/987654321/files', { method: 'POST', body: new FormData() }],
    ] as Array<[string, RequestInit]>) {
      const response = await api.call(path, init);
      expect(response.status, path).not.toBe(403);
      await response.body?.cancel();
    }
  });
});

describe('whatever hands data out needs read', () => {
  const json = (key: string, method: string, path: string, body: unknown) =>
    fetch(`${api.base}${path}`, { method, headers: { ...withKey(key), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  it('when a write-only key asks for a file link, then it is 403 naming read and no link is made; a read-only key gets one', async () => {
    const writer = await makeKey(['write']);
    const form = new FormData();
    form.append('files', new Blob([`%PDF-1.4 linked ${Date.now()}`]), 'linked.pdf');
    const uploaded = await envelopeOf(await fetch(`${api.base}/orders/3001/files`, { method: 'POST', headers: withKey(writer.key), body: form }));
    expect(uploaded.status).toBe(201);
    const fileId = (uploaded.data as { uploaded: Array<{ id: number }> }).uploaded[0]!.id;

    const refused = await json(writer.key, 'POST', `/orders/3001/files/${fileId}/link`, {});
    expect(await envelopeOf(refused)).toEqual({ status: 403, message: 'This API key lacks the read scope.', data: null });
    const reader = await makeKey(['read']);
    const made = await envelopeOf(await json(reader.key, 'POST', `/orders/3001/files/${fileId}/link`, {}));
    expect(made.status).toBe(201);
    expect(typeof (made.data as { url: string }).url).toBe('string');
  });

  it('when a webhooks-only key creates, changes or replays an endpoint, then it is 403 naming read; it may list, read, rotate, read deliveries and delete', async () => {
    const both = await makeKey(['read', 'webhooks']);
    const hooksOnly = await makeKey(['webhooks']);
    const readOnly = await makeKey(['read']);
    const url = 'http://127.0.0.1:9/scopes-hook';
    const countEndpoints = async () =>
      ((await envelopeOf(await fetch(`${api.base}/webhook-endpoints`, { headers: withKey(both.key) }))).data as unknown[]).length;
    const before = await countEndpoints();

    for (const key of [hooksOnly.key, readOnly.key]) {
      const refused = await envelopeOf(await json(key, 'POST', '/webhook-endpoints', { url }));
      expect(refused).toEqual({ status: 403, message: `This API key lacks the ${key === readOnly.key ? 'webhooks' : 'read'} scope.`, data: null });
    }
    expect(await countEndpoints()).toBe(before);

    const created = await envelopeOf(await json(both.key, 'POST', '/webhook-endpoints', { url }));
    expect(created.status).toBe(201);
    const id = (created.data as { id: number }).id;
    try {
      for (const [method, path, body] of [
        ['PATCH', `/webhook-endpoints/${id}`, { url: 'http://127.0.0.1:9/elsewhere' }],
        ['POST', `/webhook-endpoints/${id}/replay`, { after: 0 }],
      ] as const) {
        expect(await envelopeOf(await json(hooksOnly.key, method, path, body)), `${method} ${path}`).toEqual({
          status: 403,
          message: 'This API key lacks the read scope.',
          data: null,
        });
      }
      const unchanged = await envelopeOf(await fetch(`${api.base}/webhook-endpoints/${id}`, { headers: withKey(hooksOnly.key) }));
      expect(unchanged).toMatchObject({ status: 200, data: { id, url } });
      expect((await envelopeOf(await fetch(`${api.base}/webhook-endpoints`, { headers: withKey(hooksOnly.key) }))).status).toBe(200);
      expect((await envelopeOf(await fetch(`${api.base}/webhook-endpoints/${id}/deliveries`, { headers: withKey(hooksOnly.key) }))).status).toBe(200);
      const rotated = await envelopeOf(await json(hooksOnly.key, 'POST', `/webhook-endpoints/${id}/rotate-secret`, {}));
      expect(rotated.status).toBe(200);

      const patched = await envelopeOf(await json(both.key, 'PATCH', `/webhook-endpoints/${id}`, { url: 'http://127.0.0.1:9/elsewhere' }));
      expect(patched).toMatchObject({ status: 200, data: { url: 'http://127.0.0.1:9/elsewhere' } });
      const replayed = await envelopeOf(await json(both.key, 'POST', `/webhook-endpoints/${id}/replay`, { after: 2 ** 40 }));
      expect(replayed.status).toBe(202);
    } finally {
      const removed = await envelopeOf(await fetch(`${api.base}/webhook-endpoints/${id}`, { method: 'DELETE', headers: withKey(hooksOnly.key) }));
      expect(removed).toEqual({ status: 200, message: 'Webhook endpoint deleted', data: null });
    }
    expect(await countEndpoints()).toBe(before);
  });
});

describe('precedence of 403', () => {
  it('when the key is wrong, then 401 comes before any scope check', async () => {
    const response = await fetch(`${api.base}/orders/1/files`, { method: 'POST', headers: withKey('lgk_not-a-key') });
    expect(await envelopeOf(response)).toEqual({ status: 401, message: 'Authentication failed', data: null });
  });

  it('when a read-only key uploads to a missing order or sends an invalid upload, then 403 comes before 404 and 422, and nothing is stored', async () => {
    const { key } = await makeKey(['read']);
    const before = await api.objectKeys();
    const missingOrder = await fetch(`${api.base}/orders/987654321/files`, { method: 'POST', headers: withKey(key) });
    expect(await envelopeOf(missingOrder)).toEqual({ status: 403, message: 'This API key lacks the write scope.', data: null });
    const form = new FormData();
    form.append('files', new Blob(['%PDF-1.4 refused']), 'cmr.pdf');
    form.append('category_id', 'not-a-category');
    const existingOrder = (await api.knex('orders').where({ directory: DIRS.baltic }).first()) as { id: number };
    const invalid = await fetch(`${api.base}/orders/${existingOrder.id}/files`, { method: 'POST', headers: withKey(key), body: form });
    expect(await envelopeOf(invalid)).toEqual({ status: 403, message: 'This API key lacks the write scope.', data: null });
    expect(await api.objectKeys()).toEqual(before);
    expect(await api.knex('order_files').where({ name: 'cmr.pdf' }).count({ n: '*' })).toEqual([{ n: 0 }]);
  });

  it("when a key without webhooks asks for another directory's endpoint, then it is 403, not a 404 that would say anything about ids", async () => {
    const { key } = await makeKey(['read', 'write']);
    const response = await fetch(`${api.base}/webhook-endpoints/1`, { headers: withKey(key) });
    expect((await envelopeOf(response)).status).toBe(403);
  });

  it('when a 403 is answered, then it counted against the rate limit like any request that reached a route', async () => {
    const { key } = await makeKey(['read']);
    const response = await fetch(`${api.base}/webhook-endpoints`, { headers: withKey(key) });
    expect(response.status).toBe(403);
    expect(response.headers.get('x-ratelimit-limit')).not.toBeNull();
  });
});

describe('the SDK', () => {
  it('when a key lacks the scope of a call, then the SDK throws an ApiError with status 403 and the message, and does not retry it', async () => {
    const { key } = await makeKey(['read']);
    let requests = 0;
    const client = createClient({
      baseUrl: api.base,
      token: key,
      clientDirectory: DIRS.baltic,
      retry: { attempts: 3 },
      fetch: (input, init) => (requests++, fetch(input, init)),
    });
    const error = (await client.webhooks.list().catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect({ status: error.status, message: error.message }).toEqual({ status: 403, message: 'This API key lacks the webhooks scope.' });
    expect(requests).toBe(1);
    await expect(client.invoices.list()).resolves.toMatchObject({ invoices: expect.any(Array) });
  });
});

describe('several keys, expiry, last use', () => {
  it('when a directory holds several keys, then each works, and a key of one directory is 401 with another directory', async () => {
    const first = await makeKey(SCOPES);
    const second = await makeKey(['read']);
    for (const { key } of [first, second]) expect((await fetch(`${api.base}/invoices`, { headers: withKey(key) })).status).toBe(200);
    expect((await fetch(`${api.base}/invoices`, { headers: withKey(KEYS.baltic) })).status).toBe(200);
    expect(await envelopeOf(await fetch(`${api.base}/invoices`, { headers: withKey(first.key, DIRS.alpine) }))).toEqual({
      status: 401,
      message: 'Authentication failed',
      data: null,
    });
  });

  it('when a key has expired, then it is 401; one that expires later works', async () => {
    const expired = await makeKey(SCOPES, { expires: now() - 1 });
    const later = await makeKey(SCOPES, { expires: now() + 3600 });
    expect(await envelopeOf(await fetch(`${api.base}/invoices`, { headers: withKey(expired.key) }))).toEqual({
      status: 401,
      message: 'Authentication failed',
      data: null,
    });
    expect((await fetch(`${api.base}/invoices`, { headers: withKey(later.key) })).status).toBe(200);
  });

  it('when a key is used, then its last use is stored; within a minute of the stored one nothing is written, after it the time moves on', async () => {
    const lastUsed = async (id: number) => (await keys.list(DIRS.baltic)).find((k) => k.id === id)!.lastUsed;
    const fresh = await makeKey(['read']);
    expect(await lastUsed(fresh.id)).toBeNull();
    const t0 = now();
    expect((await fetch(`${api.base}/orders/file-categories`, { headers: withKey(fresh.key) })).status).toBe(200);
    expect(await lastUsed(fresh.id)).toBeGreaterThanOrEqual(t0);

    // Another process recorded it 30 s ago: this one leaves it.
    const recent = await makeKey(['read']);
    await api
      .knex('api_keys')
      .where({ id: recent.id })
      .update({ last_used_at: now() - 30 });
    const stored = await lastUsed(recent.id);
    for (let i = 0; i < 5; i++) expect((await fetch(`${api.base}/orders/file-categories`, { headers: withKey(recent.key) })).status).toBe(200);
    expect(await lastUsed(recent.id)).toBe(stored);

    // Recorded more than a minute ago: the next request records it again.
    const stale = await makeKey(['read']);
    await api
      .knex('api_keys')
      .where({ id: stale.id })
      .update({ last_used_at: now() - 61 });
    const t1 = now();
    expect((await fetch(`${api.base}/orders/file-categories`, { headers: withKey(stale.key) })).status).toBe(200);
    expect(await lastUsed(stale.id)).toBeGreaterThanOrEqual(t1);
  });
});

describe('revocation on every API process', () => {
  it(
    "when keys:revoke exits, then the key answers 401 on two API processes within 2 s, and the directory's other keys keep working",
    { timeout: 180_000 },
    async () => {
      const second = buildContainer(api.config, pino({ level: 'silent' }));
      const other = await startServer(second);
      try {
        const env = { DATA_DIR: api.dataDir, ...(api.stack?.env ?? {}) };
        const created = await cli(['keys:create', '--directory', DIRS.baltic, '--name', 'leaked', '--scopes', 'read'], env);
        expect(created.code).toBe(0);
        const [key, idLine, ...rest] = created.stdout.split('\n');
        expect(rest).toEqual(['']);
        expect(key).toMatch(/^lgk_[A-Za-z0-9_-]{43}$/);
        const id = /^id: (\d+)$/.exec(idLine!)?.[1];
        expect(id).toBeDefined();
        const bases = [api.base, `${other.url}/v1`];
        for (const base of bases) expect((await fetch(`${base}/invoices`, { headers: withKey(key!) })).status).toBe(200);

        const revoked = await cli(['keys:revoke', '--directory', DIRS.baltic, '--key-id', id!], env);
        const exited = Date.now();
        expect(revoked).toMatchObject({ code: 0, stdout: `Revoked key ${id} of "${DIRS.baltic}"; it is refused from now on.\n` });
        await expect
          .poll(async () => Promise.all(bases.map(async (base) => (await fetch(`${base}/invoices`, { headers: withKey(key!) })).status)), {
            timeout: 2000,
            interval: 50,
          })
          .toEqual([401, 401]);
        expect(Date.now() - exited).toBeLessThan(2000);
        for (const base of bases) expect((await fetch(`${base}/invoices`, { headers: withKey(KEYS.baltic) })).status).toBe(200);
      } finally {
        await other.stop();
      }
    },
  );
});

describe('upgrading a database of the previous release', () => {
  it('when the API starts on a schema migrated to 015 with a client and its one key, then that key works with every scope', { timeout: 120_000 }, async () => {
    const db = await openTestDatabase(PROFILE === 'production' ? 'mariadb' : 'sqlite', 'keys-upgrade-api', { migrate: false });
    let server: Awaited<ReturnType<typeof startServer>> | null = null;
    let knex: Knex | null = null;
    try {
      await migrateUpTo(db.knex, '015-webhook-fair-claims');
      await db.knex('clients').insert({
        directory: 'pre-scopes',
        name: 'Pre Scopes',
        api_key_hash: hasher.hash('old-key-pre-scopes'),
        company_name: 'Pre Scopes Ltd',
        company_address: '',
        company_vat: '',
        company_bank_account: '',
        company_bank_name: '',
        created_at: now(),
        updated_at: now(),
      });
      const config = loadConfig(
        withTestSecretKey({
          DATA_DIR: db.dataDir,
          ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}),
          PORT: '0',
          METRICS_PORT: '0',
          LOG_LEVEL: 'silent',
        }),
      );
      const container = buildContainer(config, pino({ level: 'silent' }));
      knex = container.get<Knex>(Tokens.Knex);
      expect(await migrateLatest(knex)).toContain('017-api-keys');
      server = await startServer(container);
      const headers = withKey('old-key-pre-scopes', 'pre-scopes');
      expect((await fetch(`${server.url}/v1/invoices`, { headers })).status).toBe(200);
      expect((await fetch(`${server.url}/v1/webhook-endpoints`, { headers })).status).toBe(200);
      const upload = await fetch(`${server.url}/v1/orders/987654321/files`, { method: 'POST', headers, body: new FormData() });
      expect(await envelopeOf(upload)).toEqual({ status: 404, message: 'Order not found', data: null });
    } finally {
      if (server) await server.stop();
      else await knex?.destroy();
      await db.drop();
    }
  });
});
