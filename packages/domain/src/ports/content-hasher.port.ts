/** Digests of text, for keys that name content (the PDF cache). */
export interface ContentHasherPort {
  /** SHA-256 of the UTF-8 bytes of `text`, as 64 lower-case hex digits. */
  sha256Hex(text: string): string;
}
