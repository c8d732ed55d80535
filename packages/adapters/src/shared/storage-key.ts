/**
 * Keys are made by the service (`staging/<uuid>`, `orders/<dir>/<id>/<uuid>`, `pdf-cache/<sha256>.pdf`,
 * `exports/<id>-<attempt>.zip`,
 * `pdf/<id>.pdf`); anything else is refused so that a key can never climb out
 * of a root directory or mean something odd to S3. A segment may not start
 * with a dot: that keeps `.`/`..` out and reserves dot-names for temp files,
 * which then can never clash with a key.
 */
const SEGMENT = /^[\p{L}\p{N}_~@+=,-][\p{L}\p{N}._~@+=,-]*$/u;
const MAX_KEY_LENGTH = 512;

export function assertValidStorageKey(key: string): void {
  if (!isValidStorageKey(key)) throw new Error(`Invalid storage key: ${JSON.stringify(key.slice(0, 80))}`);
}

/** Whether the service could have made `key`; listings name only such keys, so a stray object never stops a walk. */
export function isValidStorageKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_LENGTH && key.split('/').every((s) => SEGMENT.test(s));
}
