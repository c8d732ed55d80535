/** Resolves a host name to its addresses (every A and AAAA record). */
export interface HostResolverPort {
  /** The addresses of `host`, in the textual form of each family; an empty list when the name does not resolve. */
  resolve(host: string): Promise<string[]>;
}
