import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeyHasherPort } from '@logi/domain';

/** Marks a string as one of our keys (easy to spot in logs and secret scanners). */
const KEY_PREFIX = 'lgk_';
const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Keys are 256 random bits, so a plain SHA-256 is enough to store them: there
 * is nothing to brute-force that a slow hash would protect.
 */
export class Sha256ApiKeyHasher implements ApiKeyHasherPort {
  generate(): string {
    return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  }

  hash(apiKey: string): string {
    return createHash('sha256').update(apiKey, 'utf8').digest('hex');
  }

  verify(apiKey: string, storedHash: string): boolean {
    const presented = Buffer.from(this.hash(apiKey), 'hex');
    // A malformed stored hash is compared against itself-sized garbage, never short-circuited by length.
    const stored = Buffer.from(SHA256_HEX.test(storedHash) ? storedHash : '0'.repeat(64), 'hex');
    return timingSafeEqual(presented, stored) && SHA256_HEX.test(storedHash);
  }
}
