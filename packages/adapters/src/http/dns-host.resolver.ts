import dns from 'node:dns';
import type { HostResolverPort } from '@logi/domain';

/** Answers that mean "this name has no address", as opposed to a resolver that is broken. */
const NOT_RESOLVED = new Set(['ENOTFOUND', 'ENODATA', 'EAI_AGAIN', 'EAI_NODATA', 'EAI_NONAME']);

/**
 * Resolves names with the system resolver (getaddrinfo, as a delivery's
 * connection does), so the addresses judged at registration are the ones a
 * delivery would be given: /etc/hosts and search domains included.
 */
export class DnsHostResolver implements HostResolverPort {
  async resolve(host: string): Promise<string[]> {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    try {
      const addresses = await dns.promises.lookup(bare, { all: true, family: 0 });
      return [...new Set(addresses.map((a) => a.address))];
    } catch (error) {
      // EAI_AGAIN (no answer in time) reads as unresolved too: the registration accepts such a name, and every delivery checks the address it connects to.
      if (NOT_RESOLVED.has((error as NodeJS.ErrnoException).code ?? '')) return [];
      throw error;
    }
  }
}
