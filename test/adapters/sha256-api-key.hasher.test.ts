import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Sha256ApiKeyHasher } from '@logi/adapters';

describe('Sha256ApiKeyHasher', () => {
  const hasher = new Sha256ApiKeyHasher();

  it('when keys are generated, then each is new, prefixed and carries 32 random bytes', () => {
    const keys = Array.from({ length: 50 }, () => hasher.generate());
    expect(new Set(keys).size).toBe(50);
    for (const key of keys) {
      expect(key).toMatch(/^lgk_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(key.slice(4), 'base64url')).toHaveLength(32);
    }
  });

  it('when a key is hashed, then it is its SHA-256 in hex, never the key itself', () => {
    expect(hasher.hash('demo-key-baltic')).toBe(createHash('sha256').update('demo-key-baltic').digest('hex'));
    expect(hasher.hash('demo-key-baltic')).not.toContain('demo');
  });

  it('when a key is verified, then only the right key passes; a malformed stored hash never does', () => {
    const stored = hasher.hash('right');
    expect(hasher.verify('right', stored)).toBe(true);
    expect(hasher.verify('wrong', stored)).toBe(false);
    expect(hasher.verify('right', stored.toUpperCase())).toBe(false);
    expect(hasher.verify('right', '')).toBe(false);
    expect(hasher.verify('right', stored.slice(0, 10))).toBe(false);
    expect(hasher.verify('', '0'.repeat(64))).toBe(false);
  });
});
