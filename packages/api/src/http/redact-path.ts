/**
 * Where the API's own file links are served; the last segment is the token,
 * a credential for the file (ADR 0040). No imports: the entry point hands
 * `redactPath` to tracing before anything else loads.
 */
export const FILE_LINK_PREFIX = '/v1/file-links/';

const REDACTED = '[REDACTED]';

/**
 * A request path as logs and traces may keep it: a file link's token is
 * replaced by `[REDACTED]` (matched without regard to letter case, as the
 * router matches), anything else is kept as it is.
 */
export function redactPath(path: string): string {
  const [pathname = '', ...query] = path.split('?');
  if (!pathname.toLowerCase().startsWith(FILE_LINK_PREFIX) || pathname.length === FILE_LINK_PREFIX.length) return path;
  return [pathname.slice(0, FILE_LINK_PREFIX.length) + REDACTED, ...query].join('?');
}
