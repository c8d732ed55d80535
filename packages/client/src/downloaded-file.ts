import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
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

/** A stored file as it arrives: a stream of its bytes (never held whole in memory) and what the headers say. */
export interface StreamedFile {
  /** The bytes (the whole file, or the range asked for); read it to the end or cancel it. `Readable.fromWeb(body)` makes it a Node stream. */
  body: NodeReadableStream<Uint8Array>;
  /** From `Content-Disposition` (`filename*` when sent, else `filename`). */
  fileName: string;
  contentType: string;
  /** Bytes in `body` (`Content-Length`). */
  length: number;
  /** `"<sha256>"`: the file's version, for `If-None-Match` or `If-Range`. */
  etag: string | null;
  /** For a ranged answer (206): the bytes sent and the size of the whole file; null for the whole file. */
  range: { start: number; end: number; size: number } | null;
}

export function streamedFile(body: ReadableStream<Uint8Array>, response: Response, fallbackName: string): StreamedFile {
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
  return {
    // Typed as Node's web stream (what fetch gives), so that Readable.fromWeb takes it whatever the caller's lib settings.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- a client compiling with the DOM lib (the default) has another global ReadableStream
    body: body as NodeReadableStream<Uint8Array>,
    fileName: fileNameOf(response.headers.get('content-disposition')) ?? fallbackName,
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    length: Number(response.headers.get('content-length') ?? NaN),
    etag: response.headers.get('etag'),
    range: response.status === 206 && range ? { start: Number(range[1]), end: Number(range[2]), size: Number(range[3]) } : null,
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
