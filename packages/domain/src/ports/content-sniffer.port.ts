/** Tells a file's content type from its first bytes (magic numbers), never from the client's headers or name. */
export interface ContentSnifferPort {
  /** How many bytes of a file's head `contentTypeOf` needs at most. */
  readonly headBytes: number;
  /** The content type of a file starting with `head`; text without binary bytes is text/plain, the unknown application/octet-stream. */
  contentTypeOf(head: Uint8Array): Promise<string>;
}
