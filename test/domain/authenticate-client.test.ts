import { describe, expect, it } from 'vitest';
import { AuthenticateClientUseCase, AuthenticationFailedError, type ApiKeyHasherPort, type ClientRepositoryPort, type ClientWithKey } from '@logi/domain';

const hasher: ApiKeyHasherPort = {
  generate: () => 'new-key',
  hash: (key) => `h(${key})`,
  verify: (key, stored) => `h(${key})` === stored,
};
const client: ClientWithKey = {
  id: 1,
  directory: 'Baltic',
  name: 'Baltic',
  apiKeyHash: 'h(secret)',
  company: { name: 'B', address: '', vat: '', bankAccount: '', bankName: '' },
};
const clients: ClientRepositoryPort = {
  findByDirectory: async (directory) => (directory === client.directory ? client : null),
  upsert: async () => client,
  list: async () => [client],
  updateKeyHash: async () => true,
};
const auth = new AuthenticateClientUseCase({ clients, hasher });

describe('authenticate client', () => {
  it('when the bearer key belongs to the directory, then the client is returned without its hash', async () => {
    const result = await auth.execute({ authorization: 'Bearer secret', directory: 'Baltic' });
    expect(result).toEqual({ id: 1, directory: 'Baltic', name: 'Baltic', company: client.company });
    expect(result).not.toHaveProperty('apiKeyHash');
  });

  it('when the scheme word is in another case, then it still counts', async () => {
    await expect(auth.execute({ authorization: 'bEaReR secret', directory: 'Baltic' })).resolves.toMatchObject({ id: 1 });
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
    await expect(auth.execute(credentials)).rejects.toBeInstanceOf(AuthenticationFailedError);
  });
});
