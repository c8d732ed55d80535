import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { ServiceUnavailableError, type IdempotencyClaim, type IdempotencyScope, type IdempotencyStorePort } from '@logi/domain';
import { isUniqueViolation } from './db-errors.js';

interface IdempotencyRow {
  fingerprint: string;
  lock_token: string | null;
  answer: string | null;
  expires_at: number | string;
}

/** Rounds of insert-or-read before giving up: each lost round means another request just changed the row. */
const MAX_ROUNDS = 5;

/**
 * Idempotency keys in the `idempotency_keys` table (migration 005), for the
 * embedded profile and for MariaDB without Redis. The primary key makes the
 * first insert win; a row past `expires_at` is taken over by a conditional
 * update, so two requests never both hold a key.
 */
export class KnexIdempotencyStore implements IdempotencyStorePort {
  constructor(
    private readonly knex: Knex,
    /** Unix ms; the system clock by default (tests move it). */
    private readonly now: () => number = Date.now,
  ) {}

  async claim(scope: IdempotencyScope, fingerprint: string, lockMs: number): Promise<IdempotencyClaim> {
    const digest = fingerprintDigest(fingerprint);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const token = randomUUID();
      const fresh = { fingerprint: digest, lock_token: token, answer: null, expires_at: this.now() + lockMs };
      try {
        await this.knex('idempotency_keys').insert({ directory: scope.directory, idempotency_key: scope.key, ...fresh });
        return { kind: 'claimed', token };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      const row = (await this.rows(scope).select('fingerprint', 'lock_token', 'answer', 'expires_at').first()) as IdempotencyRow | undefined;
      if (!row) continue;
      if (Number(row.expires_at) <= this.now()) {
        // Taken over only if nobody changed the row since it was read.
        const unchanged = this.rows(scope).where({ expires_at: row.expires_at, fingerprint: row.fingerprint });
        if (row.lock_token === null) unchanged.whereNull('lock_token');
        else unchanged.where({ lock_token: row.lock_token });
        const taken = await unchanged.update(fresh);
        if (taken === 1) return { kind: 'claimed', token };
        continue;
      }
      if (row.fingerprint !== digest) return { kind: 'mismatch' };
      if (row.answer !== null) return { kind: 'replay', answer: JSON.parse(row.answer) as unknown };
      return { kind: 'in-flight' };
    }
    throw new ServiceUnavailableError('idempotency key changed hands too often', 1);
  }

  async complete(scope: IdempotencyScope, token: string, answer: unknown, keepMs: number): Promise<void> {
    await this.rows(scope)
      .where({ lock_token: token })
      .update({ lock_token: null, answer: JSON.stringify(answer), expires_at: this.now() + keepMs });
  }

  async release(scope: IdempotencyScope, token: string): Promise<void> {
    await this.rows(scope).where({ lock_token: token }).delete();
  }

  async deleteExpired(): Promise<number> {
    return this.knex('idempotency_keys').where('expires_at', '<=', this.now()).delete();
  }

  private rows(scope: IdempotencyScope): Knex.QueryBuilder {
    return this.knex('idempotency_keys').where({ directory: scope.directory, idempotency_key: scope.key });
  }
}

/** A fixed-size digest: a fingerprint lists every file's name and may be long. */
export function fingerprintDigest(fingerprint: string): string {
  return createHash('sha256').update(fingerprint).digest('hex');
}
