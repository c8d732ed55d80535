import { ValidationError, type FieldErrors } from '../shared/common.errors.js';
import { Messages } from '../shared/messages.js';
import type { IdempotencyScope, IdempotencyStorePort } from '../ports/idempotency-store.port.js';
import { IdempotencyKeyInUseError } from './idempotency.errors.js';

/** The header as clients send it; also the field name in a 422's `errors`. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** How long a first answer is replayed (Stripe's 24 hours). */
export const IDEMPOTENCY_KEEP_MS = 24 * 60 * 60_000;
const MAX_KEY_LENGTH = 255;

/** Problems with the header value; empty when it may be used (or was not sent). */
export function idempotencyKeyErrors(key: string | undefined): FieldErrors {
  if (key === undefined) return {};
  if (key.length > MAX_KEY_LENGTH) return { [IDEMPOTENCY_HEADER]: [Messages.IDEMPOTENCY_KEY_TOO_LONG] };
  if (!/^[\x21-\x7e]+$/.test(key)) return { [IDEMPOTENCY_HEADER]: [Messages.IDEMPOTENCY_KEY_INVALID] };
  return {};
}

export interface IdempotentOutcome<T> {
  value: T;
  replayed: boolean;
}

/**
 * Runs `work` at most once per key and request fingerprint. A finished
 * answer is kept and given back to retries; a `work` that throws keeps
 * nothing (validation failed before, nothing was stored, or a dependency was
 * down: the retry runs anew). Another request's fingerprint under the same
 * key is a 422 naming the header; the same request still running is
 * `IdempotencyKeyInUseError` (409, retry shortly).
 */
export async function runIdempotently<T>(
  store: IdempotencyStorePort,
  scope: IdempotencyScope,
  fingerprint: string,
  options: { lockMs: number },
  work: () => Promise<T>,
): Promise<IdempotentOutcome<T>> {
  const claim = await store.claim(scope, fingerprint, options.lockMs);
  if (claim.kind === 'mismatch') {
    throw new ValidationError(Messages.IDEMPOTENCY_KEY_REUSED, { [IDEMPOTENCY_HEADER]: [Messages.IDEMPOTENCY_KEY_REUSED] });
  }
  if (claim.kind === 'in-flight') throw new IdempotencyKeyInUseError();
  if (claim.kind === 'replay') return { value: claim.answer as T, replayed: true };
  let value: T;
  try {
    value = await work();
  } catch (error) {
    // The lock runs out by itself if this fails too.
    await store.release(scope, claim.token).catch(() => undefined);
    throw error;
  }
  // The answer is the client's even if it cannot be kept; a retry after the lock runs out then runs anew.
  await store.complete(scope, claim.token, value, IDEMPOTENCY_KEEP_MS).catch(() => undefined);
  return { value, replayed: false };
}
