import contentDisposition from 'content-disposition';

/** A downloaded document: its bytes and the file name the server gave it. */
export interface DownloadedFile {
  bytes: Uint8Array;
  /** From `Content-Disposition` (`filename*` when sent, else `filename`). */
  fileName: string;
  contentType: string;
  /** The document's version; send it as `If-None-Match` through `client.raw` to skip an unchanged download. */
  etag: string | null;
}

export function downloadedFile(bytes: ArrayBuffer, response: Response, fallbackName: string): DownloadedFile {
  return {
    bytes: new Uint8Array(bytes),
    fileName: fileNameOf(response.headers.get('content-disposition')) ?? fallbackName,
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    etag: response.headers.get('etag'),
  };
}

function fileNameOf(header: string | null): string | null {
  if (!header) return null;
  try {
    // The library decodes `filename*` (RFC 5987) into `filename`, preferring it to the ASCII one.
    return contentDisposition.parse(header).parameters.filename ?? null;
  } catch {
    return null;
  }
}
