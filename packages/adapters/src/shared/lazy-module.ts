import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A dependency loaded on first use instead of with the adapters. BullMQ and
 * the MinIO client each cost about a third of a second of start-up, paid by
 * every process that imports `@logi/adapters` (the CLI, an embedded API,
 * every test file) whether or not it ever talks to Redis or S3. Both ship a
 * CommonJS build, which `require` loads synchronously, so the classes that
 * construct their clients in a constructor stay as they are.
 */
export function lazyModule<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(id) as T);
}
