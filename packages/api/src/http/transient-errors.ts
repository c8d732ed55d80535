/** Error codes that mean a dependency (database, Redis, storage) is gone or slow, not a bug. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

/** True when the answer should be 503 + Retry-After rather than 500. */
export function isTransientInfrastructureError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
  // knex's pool gives up with this name when no connection can be had in time.
  return error.name === 'KnexTimeoutError';
}
