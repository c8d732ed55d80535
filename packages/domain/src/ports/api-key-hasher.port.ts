/** Turns API keys into stored hashes and checks a presented key in constant time. */
export interface ApiKeyHasherPort {
  /** A new random key to hand to a client once. */
  generate(): string;
  hash(apiKey: string): string;
  /** Constant-time comparison of a presented key against a stored hash. */
  verify(apiKey: string, storedHash: string): boolean;
}
