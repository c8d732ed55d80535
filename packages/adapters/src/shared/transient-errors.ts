import { ServiceUnavailableError } from '@logi/domain';

/** Error codes that mean a dependency (database, Redis, storage) is gone, slow or busy, not a bug. */
const TRANSIENT_CODES = new Set([
  // The network: refused, reset, timed out, unroutable, or a name that does not resolve right now.
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  // MariaDB/MySQL: the connection dropped, the server is full or going down, or a lock was lost.
  'PROTOCOL_CONNECTION_LOST',
  // A statement with no answer within DB_QUERY_TIMEOUT_MS (a hung or stopped server).
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_LOCK_DEADLOCK',
]);

/** SQLite's busy and locked codes come in extended forms (SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED_SHAREDCACHE, ...). */
const TRANSIENT_CODE_FAMILIES = ['SQLITE_BUSY', 'SQLITE_LOCKED'];

/** True when the failure should pass by itself: an API answers 503 + Retry-After rather than 500, a job fails as unavailable. */
export function isTransientInfrastructureError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (TRANSIENT_CODES.has(code) || TRANSIENT_CODE_FAMILIES.some((family) => code === family || code.startsWith(`${family}_`)))) {
    return true;
  }
  // mysql2 marks errors that killed the connection as fatal, some with no code at all
  // ("Can't add new command when connection is in closed state"); the pool replaces it.
  if ((error as { fatal?: unknown }).fatal === true) return true;
  // knex's pool gives up with this name when no connection can be had in time.
  return error.name === 'KnexTimeoutError';
}

/**
 * `adapter` as the port it implements, with its technology's transient
 * failures raised as the domain's ServiceUnavailableError (the driver's error
 * as `cause`): the edges map domain errors only. Every method is covered, by
 * a proxy rather than a wrapper per method; methods run on the adapter itself.
 * Composition roots wrap the object they bind, outermost, so an adapter that
 * composes others (the read replicas' failover) still sees the driver's error.
 */
export function unavailableOnOutage<T extends object>(adapter: T, dependency: string): T {
  const translate = (error: unknown): unknown =>
    error instanceof ServiceUnavailableError || !isTransientInfrastructureError(error)
      ? error
      : Object.assign(new ServiceUnavailableError(`${dependency} unavailable`), { cause: error });
  // One wrapper per method, made on first use.
  const wrapped = new WeakMap<(...args: unknown[]) => unknown, (...args: unknown[]) => unknown>();
  return new Proxy(adapter, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      let wrapper = wrapped.get(method);
      if (!wrapper) {
        wrapper = (...args: unknown[]) => {
          let result: unknown;
          try {
            result = method.apply(target, args);
          } catch (error) {
            throw translate(error);
          }
          return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(translate(error))) : result;
        };
        wrapped.set(method, wrapper);
      }
      return wrapper;
    },
  });
}
