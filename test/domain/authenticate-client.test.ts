import { describe, expect, it } from 'vitest';
import {
  ApiKeyScopeMissingError,
  AuthenticateClientUseCase,
  AuthenticationFailedError,
  LAST_USE_RESOLUTION_SECONDS,
  parseApiKeyScopes,
  requireScopes,
  type ApiKey,
  type ApiKeyHasherPort,
  type ApiKeyRepositoryPort,
  type Client,
  type StoredApiKey,
} from '@logi/domain';

const hasher: ApiKeyHasherPort = {
  generate: () => 'new-key',
  hash: (key) => `h(${key})`,
  verify: (key, stored) => `h(${key})` === stored,
};
const client: Client = { id: 1, directory: 'Baltic', name: 'Baltic', company: { name: 'B', address: '', vat: '', bankAccount: '', bankName: '' } };
const NOW = 1_800_000_000;

/** Keys by (directory, hash), as the unique index finds them; records every last-use write. */
class FakeKeys implements ApiKeyRepositoryPort {
  readonly uses: Array<{ id: number; at: number }> = [];
  failUses = false;
  constructor(readonly keys: StoredApiKey[]) {}
  async findForAuthentication(directory: string, keyHash: string) {
    const key = this.keys.find((k) => k.directory === directory && k.keyHash === keyHash);
    return key ? { key: { ...key }, client } : null;
  }
  async recordUse(id: number, at: number) {
    if (this.failUses) throw new Error('database is read-only');
    this.uses.push({ id, at });
    this.keys.find((k) => k.id === id)!.lastUsed = at;
  }
  async create(): Promise<ApiKey> {
    throw new Error('not used');
  }
  async findById(directory: string, id: number) {
    return this.keys.find((k) => k.directory === directory && k.id === id) ?? null;
  }
  async list() {
    return this.keys;
  }
  async revoke() {
    return null;
  }
  async revokeAll() {
    return 0;
  }
}

function key(overrides: Partial<StoredApiKey> = {}): StoredApiKey {
  return {
    id: 7,
    directory: 'Baltic',
    name: 'main',
    scopes: ['read', 'write', 'webhooks'],
    created: NOW - 1000,
    expires: null,
    lastUsed: null,
    revoked: null,
    keyHash: 'h(secret)',
    ...overrides,
  };
}

function setup(keys: StoredApiKey[] = [key()]) {
  const clock = { at: NOW, now: () => new Date(clock.at * 1000) };
  const repository = new FakeKeys(keys);
  const failures: unknown[] = [];
  const auth = new AuthenticateClientUseCase({ keys: repository, hasher, clock, onUseNotRecorded: (error) => failures.push(error) });
  return { auth, repository, clock, failures };
}

const valid = { authorization: 'Bearer secret', directory: 'Baltic' };

describe('authenticate client', () => {
  it("when the bearer key is one of the directory's, then the client and the key's id and scopes are returned, never its hash", async () => {
    const { auth } = setup([key({ scopes: ['read'] })]);
    const result = await auth.execute(valid);
    expect(result).toEqual({ client, key: { id: 7, scopes: ['read'] } });
    expect(JSON.stringify(result)).not.toContain('h(secret)');
  });

  it('when the directory holds several keys, then each of them works with its own scopes', async () => {
    const { auth } = setup([key(), key({ id: 8, keyHash: 'h(reporting)', scopes: ['read'] })]);
    await expect(auth.execute(valid)).resolves.toMatchObject({ key: { id: 7 } });
    await expect(auth.execute({ ...valid, authorization: 'Bearer reporting' })).resolves.toMatchObject({ key: { id: 8, scopes: ['read'] } });
  });

  it('when the scheme word is in another case, then it still counts', async () => {
    await expect(setup().auth.execute({ authorization: 'bEaReR secret', directory: 'Baltic' })).resolves.toMatchObject({ client: { id: 1 } });
  });

  it.each([
    ['no authorization', { authorization: undefined, directory: 'Baltic' }],
    ['no directory', { authorization: 'Bearer secret', directory: undefined }],
    ['a wrong key', { authorization: 'Bearer nope', directory: 'Baltic' }],
    ['a directory in another case', { authorization: 'Bearer secret', directory: 'baltic' }],
    ['another scheme', { authorization: 'Basic secret', directory: 'Baltic' }],
    ['a bare key', { authorization: 'secret', directory: 'Baltic' }],
    ['an unknown directory', { authorization: 'Bearer secret', directory: 'Other' }],
  ])('when %s, then authentication fails', async (_name, credentials) => {
    await expect(setup().auth.execute(credentials)).rejects.toBeInstanceOf(AuthenticationFailedError);
  });

  it('when the key belongs to another directory, then authentication fails', async () => {
    const { auth } = setup([key({ directory: 'Other' })]);
    await expect(auth.execute(valid)).rejects.toBeInstanceOf(AuthenticationFailedError);
  });

  it('when no key matches, then the presented key is still compared in constant time (against a dummy), so timing tells nothing', async () => {
    const compared: string[] = [];
    const auth = new AuthenticateClientUseCase({
      keys: new FakeKeys([]),
      hasher: { ...hasher, verify: (k, stored) => (compared.push(stored), hasher.verify(k, stored)) },
      clock: { now: () => new Date(NOW * 1000) },
    });
    await expect(auth.execute({ authorization: 'Bearer secret', directory: 'Nobody' })).rejects.toBeInstanceOf(AuthenticationFailedError);
    expect(compared).toEqual(['0'.repeat(64)]);
  });

  it('when the key is revoked, then authentication fails', async () => {
    const { auth } = setup([key({ revoked: NOW - 1 })]);
    await expect(auth.execute(valid)).rejects.toBeInstanceOf(AuthenticationFailedError);
  });

  it('when the key expires, then it works up to its expiry and fails from that second on', async () => {
    const { auth, clock } = setup([key({ expires: NOW + 1 })]);
    await expect(auth.execute(valid)).resolves.toMatchObject({ key: { id: 7 } });
    clock.at = NOW + 1;
    await expect(auth.execute(valid)).rejects.toBeInstanceOf(AuthenticationFailedError);
  });

  it('when a key is used many times within a minute, then its last use is written once, and again once the minute has passed', async () => {
    const { auth, repository, clock } = setup();
    for (let i = 0; i < 50; i++) await auth.execute(valid);
    clock.at = NOW + LAST_USE_RESOLUTION_SECONDS - 1;
    await auth.execute(valid);
    expect(repository.uses).toEqual([{ id: 7, at: NOW }]);
    clock.at = NOW + LAST_USE_RESOLUTION_SECONDS;
    await auth.execute(valid);
    expect(repository.uses).toEqual([
      { id: 7, at: NOW },
      { id: 7, at: NOW + LAST_USE_RESOLUTION_SECONDS },
    ]);
  });

  it('when another process recorded the use less than a minute ago, then this one writes nothing', async () => {
    const { auth, repository } = setup([key({ lastUsed: NOW - 30 })]);
    await auth.execute(valid);
    expect(repository.uses).toEqual([]);
  });

  it('when the last use cannot be written, then the request is still let in and the failure reported', async () => {
    const { auth, repository, failures } = setup();
    repository.failUses = true;
    await expect(auth.execute(valid)).resolves.toMatchObject({ key: { id: 7 } });
    expect(failures).toEqual([new Error('database is read-only')]);
  });

  it('when a refused key is presented, then no last use is written', async () => {
    const { auth, repository } = setup([key({ revoked: NOW - 1 })]);
    await expect(auth.execute(valid)).rejects.toBeInstanceOf(AuthenticationFailedError);
    expect(repository.uses).toEqual([]);
  });
});

describe('API key scopes', () => {
  it('when a key lacks the scope a route needs, then the error names that scope', () => {
    expect(() => requireScopes({ scopes: ['read', 'webhooks'] }, ['write'])).toThrow(new ApiKeyScopeMissingError('write'));
    expect(() => requireScopes({ scopes: ['read'] }, ['write'])).toThrow('This API key lacks the write scope.');
    expect(() => requireScopes({ scopes: [] }, ['read'])).toThrow('This API key lacks the read scope.');
  });

  it('when a route needs several scopes and the key lacks some, then the first missing one is named in the order read, write, webhooks', () => {
    expect(() => requireScopes({ scopes: ['webhooks'] }, ['webhooks', 'read'])).toThrow('This API key lacks the read scope.');
    expect(() => requireScopes({ scopes: ['read'] }, ['webhooks', 'read'])).toThrow('This API key lacks the webhooks scope.');
    expect(() => requireScopes({ scopes: [] }, ['webhooks', 'write', 'read'])).toThrow('This API key lacks the read scope.');
    expect(() => requireScopes({ scopes: ['read'] }, ['webhooks', 'write'])).toThrow('This API key lacks the write scope.');
  });

  it('when a key holds every scope the route needs, then nothing is thrown', () => {
    expect(() => requireScopes({ scopes: ['webhooks'] }, ['webhooks'])).not.toThrow();
    expect(() => requireScopes({ scopes: ['read', 'webhooks'] }, ['webhooks', 'read'])).not.toThrow();
  });

  it.each([
    ['read', ['read']],
    ['webhooks, read ,write', ['read', 'write', 'webhooks']],
    ['write,write', ['write']],
    ['', null],
    ['read,', null],
    ['read,admin', null],
    ['READ', null],
  ] as Array<[string, string[] | null]>)('when the scope list is %j, then it reads as %j', (text, scopes) => {
    expect(parseApiKeyScopes(text)).toEqual(scopes);
  });
});
