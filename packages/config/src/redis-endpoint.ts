/** One Sentinel process (REDIS_SENTINELS holds a list of them). */
export interface SentinelAddress {
  host: string;
  port: number;
}

/**
 * Where this deployment's Redis is: one server (`REDIS_URL`), or whichever
 * server a Sentinel group names its master now (`REDIS_SENTINELS` and
 * `REDIS_SENTINEL_NAME`). With Sentinel, `url` (REDIS_URL, optional) gives
 * only what the master's address does not: user, password, database and TLS
 * (`rediss:`); its host and port are not used.
 */
export type RedisEndpoint = { url: string } | { sentinels: SentinelAddress[]; name: string; url: string | null };

/** Sentinel's own default port, for an entry of REDIS_SENTINELS that names none. */
export const DEFAULT_SENTINEL_PORT = 26379;

/**
 * `host:port,host:port,...` (an IPv6 address in brackets: `[::1]:26379`; a
 * missing port means 26379). Returns the addresses, or a sentence saying
 * what is wrong, for the configuration error.
 */
export function parseSentinelList(value: string): SentinelAddress[] | string {
  const entries = value.split(',').map((entry) => entry.trim());
  if (entries.some((entry) => entry === '')) return `must be a comma-separated list of host:port with no empty entry (got "${value}")`;
  const addresses: SentinelAddress[] = [];
  for (const entry of entries) {
    const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]/@]+))(?::(\d{1,5}))?$/.exec(entry);
    const port = match?.[3] === undefined ? DEFAULT_SENTINEL_PORT : Number(match[3]);
    if (!match || port < 1 || port > 65_535) return `must be a comma-separated list of host:port, each port from 1 to 65535 (got "${entry}")`;
    addresses.push({ host: match[1] ?? match[2]!, port });
  }
  return addresses;
}

/** For logs and health answers: where Redis is looked for, without credentials. */
export function describeRedisEndpoint(endpoint: RedisEndpoint): string {
  if ('sentinels' in endpoint) {
    const list = endpoint.sentinels.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(',');
    return `sentinel master "${endpoint.name}" via ${list}`;
  }
  const url = new URL(endpoint.url);
  url.username = '';
  url.password = '';
  return url.toString();
}
