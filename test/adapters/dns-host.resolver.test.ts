/** The system resolver behind webhook registration (issue 18): every address of a name, none for a name that does not resolve. */
import { describe, expect, it } from 'vitest';
import { DnsHostResolver } from '@logi/adapters';

describe('DnsHostResolver', () => {
  const resolver = new DnsHostResolver();

  it('when the name is localhost, then its loopback addresses are given (as a delivery would be given them)', async () => {
    const addresses = await resolver.resolve('localhost');
    expect(addresses).toContain('127.0.0.1');
    expect(addresses.every((address) => address === '127.0.0.1' || address === '::1')).toBe(true);
  });

  it('when the host is an address, bracketed or not, then it is given back as it is', async () => {
    expect(await resolver.resolve('8.8.8.8')).toEqual(['8.8.8.8']);
    expect(await resolver.resolve('[2001:4860:4860::8888]')).toEqual(['2001:4860:4860::8888']);
  });

  it('when the name does not resolve, then the list is empty', async () => {
    expect(await resolver.resolve('no-such-host.invalid')).toEqual([]);
  });
});
