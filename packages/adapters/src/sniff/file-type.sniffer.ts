// Loaded on the first upload, not with the adapters: file-type and its tokenizers are some 20 to 60 ms of every process's start.
let fileType: Promise<typeof import('file-type')> | undefined;

/** Bytes of a file's head that are enough to recognise its type. */
export const SNIFF_BYTES = 4100;

/**
 * The content type told by the bytes themselves (magic numbers), never by the
 * client's headers or name. Text without binary bytes is text/plain.
 */
export async function sniffContentType(head: Buffer): Promise<string> {
  const { fileTypeFromBuffer } = await (fileType ??= import('file-type'));
  const detected = await fileTypeFromBuffer(head);
  if (detected) return detected.mime;
  return looksLikeText(head) ? 'text/plain' : 'application/octet-stream';
}

function looksLikeText(head: Buffer): boolean {
  if (head.length === 0 || head.includes(0)) return false;
  // A cut in the middle of a multi-byte character at the end of the head is fine.
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head.subarray(0, Math.max(0, head.length - 3)));
  // eslint-disable-next-line no-control-regex -- control characters are what tells binary from text
  return !text.includes('\uFFFD') && !/[\u0001-\u0008\u000e-\u001f]/.test(text);
}
