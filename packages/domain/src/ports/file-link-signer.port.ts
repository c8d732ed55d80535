/** What a file link grants: one file of one directory until `expires` (Unix seconds), while the API key that made it (`keyId`) is valid. */
export interface FileLinkClaims {
  fileId: number;
  directory: string;
  expires: number;
  keyId: number;
}

/**
 * Signs and checks the tokens of the API's own file links (used where the
 * storage cannot presign a URL). A token is URL-safe and cannot be altered
 * without the key; see ADR 0040.
 */
export interface FileLinkSignerPort {
  sign(claims: FileLinkClaims): string;
  /** The claims of a token this key signed; null for anything else (malformed, altered, another key). */
  verify(token: string): FileLinkClaims | null;
}
