/** Whose key it is: keys are scoped to a client directory. */
export interface IdempotencyScope {
  directory: string;
  key: string;
}

/**
 * What a claim found:
 * - `claimed`: the key is now held for this request (until `complete`,
 *   `release`, or the lock's time runs out); `token` proves the hold.
 * - `replay`: a request with the same fingerprint already finished; its
 *   stored answer is given back.
 * - `in-flight`: a request with the same fingerprint holds the key now.
 * - `mismatch`: the key was used (finished or running) for another request.
 */
export type IdempotencyClaim = { kind: 'claimed'; token: string } | { kind: 'replay'; answer: unknown } | { kind: 'in-flight' } | { kind: 'mismatch' };

/**
 * Idempotency keys shared by every API process: a short-lived lock while the
 * first request runs, then its answer for a day. Stores compare fingerprints
 * exactly (they may keep a digest of it). A store that does not answer
 * throws the domain's `ServiceUnavailableError`.
 */
export interface IdempotencyStorePort {
  /** Atomically takes the key for a request, or says who has it. */
  claim(scope: IdempotencyScope, fingerprint: string, lockMs: number): Promise<IdempotencyClaim>;
  /** Keeps `answer` (JSON-serialisable) for `keepMs`, if `token` still holds the key. */
  complete(scope: IdempotencyScope, token: string, answer: unknown, keepMs: number): Promise<void>;
  /** Lets the key go, keeping nothing, if `token` still holds it: the next request with it runs anew. */
  release(scope: IdempotencyScope, token: string): Promise<void>;
  /** Removes records whose time has run out; resolves with how many. Stores that expire by themselves answer 0. */
  deleteExpired(): Promise<number>;
}
