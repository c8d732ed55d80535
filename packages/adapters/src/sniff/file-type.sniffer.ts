import type { ContentSnifferPort } from '@logi/domain';

// Loaded on the first upload, not with the adapters: file-type and its tokenizers are some 20 to 60 ms of every process's start.
let fileType: Promise<typeof import('file-type')> | undefined;

/** The magic numbers file-type knows, else text/plain for text without binary bytes. */
export class FileTypeSniffer implements ContentSnifferPort {
  /** Bytes of a file's head that are enough for file-type to recognise its type. */
  readonly headBytes = 4100;

  async contentTypeOf(head: Uint8Array): Promise<string> {
    const { fileTypeFromBuffer } = await (fileType ??= import('file-type'));
    const detected = await fileTypeFromBuffer(head);
    if (detected) return detected.mime;
    return looksLikeText(head) ? 'text/plain' : 'application/octet-stream';
  }
}

function looksLikeText(head: Uint8Array): boolean {
  if (head.length === 0 || head.includes(0)) return false;
  // A cut in the middle of a multi-byte character at the end of the head is fine.
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head.subarray(0, Math.max(0, head.length - 3)));
  // eslint-disable-next-line no-control-regex -- control characters are what tells binary from text
  return !text.includes('\uFFFD') && !/[\u0001-\u0008\u000e-\u001f]/.test(text);
}
