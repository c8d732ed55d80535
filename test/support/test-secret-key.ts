/**
 * The one SECRETS_ENCRYPTION_KEYS value of test runs. The production profile (DATABASE_URL set) refuses to start
 * without a key, so every production-profile process the tests and benchmarks start gets this one unless the test
 * gives its own (or an empty value, to see the refusal): ProductionStack and PrivateStack put it in their env, and
 * the process starters (ApiProcess, WorkerProcess, the CLI runner, ServiceProcess, the benchmarks' API) add it with
 * `withTestSecretKey`. Not a secret: test databases only.
 */
export const TEST_SECRETS_ENCRYPTION_KEYS = `test-1:${Buffer.alloc(32, 0x5a).toString('base64')}`;

/** `env` with the test key added when it starts the production profile (DATABASE_URL set) and names no key itself. */
export function withTestSecretKey<T extends Record<string, string | undefined>>(env: T): T {
  if (!env.DATABASE_URL || env.SECRETS_ENCRYPTION_KEYS !== undefined) return env;
  return { ...env, SECRETS_ENCRYPTION_KEYS: TEST_SECRETS_ENCRYPTION_KEYS };
}
