import type { Context } from 'koa';
import type { ByteRange } from '@logi/domain';
import { ifNoneMatchHits } from './conditional.js';
import { HttpError } from './http-error.js';

export type { ByteRange };

/** What a download answer needs to know about the stored bytes; `open` is called only when bytes are sent. */
export interface RangedDownload {
  size: number;
  /** The strong validator, quoted: `"<sha256>"`. */
  etag: string;
  contentType: string;
  /** The whole `Content-Disposition` value (see content-disposition.ts). */
  disposition: string;
  /** Defaults to `private, no-cache`: a client may keep the bytes and asks each time (a 304 costs nothing). */
  cacheControl?: string;
  /** A stream of the bytes, or of `range` only; never read whole into memory. */
  open(range?: ByteRange): Promise<NodeJS.ReadableStream>;
}

/**
 * Answers a GET (or HEAD) with stored bytes, streamed: `ETag`, `Accept-Ranges`,
 * `Content-Length`; 304 when `If-None-Match` names the ETag; 206 with
 * `Content-Range` for one satisfiable byte range; 416 (envelope, with
 * `Content-Range: bytes *\/<size>`) for a range past the end. Several ranges,
 * a malformed or over-long header or an `If-Range` that does not match are ignored, and
 * the whole body is sent with 200, as RFC 9110 (14.2) allows.
 */
export async function sendRangedDownload(ctx: Context, download: RangedDownload): Promise<void> {
  ctx.set('ETag', download.etag);
  ctx.set('Accept-Ranges', 'bytes');
  ctx.set('Cache-Control', download.cacheControl ?? 'private, no-cache');
  if (ifNoneMatchHits(ctx.get('If-None-Match') || undefined, download.etag)) {
    ctx.status = 304;
    ctx.body = null;
    return;
  }
  const ifRange = ctx.get('If-Range');
  // If-Range with a date, or another tag: the client's partial copy is stale, so it gets the whole file.
  const range = ifRange && ifRange !== download.etag ? null : parseRange(ctx.get('Range'), download.size);
  if (range === 'unsatisfiable') {
    throw new HttpError(416, 'Range Not Satisfiable', { 'Content-Range': `bytes */${download.size}` });
  }
  const length = range ? range.end - range.start + 1 : download.size;
  const head = ctx.method === 'HEAD';
  // Koa drops Content-Type and Content-Length when the body is set, so the body goes first.
  ctx.body = head ? null : await download.open(range ?? undefined);
  ctx.status = range ? 206 : 200;
  // As stored: ctx.type would add a charset to text types.
  ctx.set('Content-Type', download.contentType);
  ctx.set('Content-Disposition', download.disposition);
  ctx.length = length;
  if (range) ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${download.size}`);
}

/**
 * The longest `Range` header read: one range of two 16-digit positions with room for spaces. A
 * longer one is ignored like a malformed one, so no header costs more than this to read.
 */
export const MAX_RANGE_HEADER_LENGTH = 200;

/**
 * `bytes=first-last`, spaces allowed around each part. No two quantifiers can trade characters
 * (a space run is either before the digits or after them), so a failing match never backtracks
 * more than once over a run: linear time. The old `\s*(\d*)\s*-` took 3 s over 60,000 spaces (issue 35).
 */
const BYTE_RANGE = /^\s*bytes\s*=\s*(?:(\d+)\s*)?-\s*(?:(\d+)\s*)?$/i;

/**
 * One range of a `Range` header against a body of `size` bytes: the range,
 * `'unsatisfiable'` (it starts past the end, or a suffix of zero bytes), or
 * null when the header is absent, malformed, over `MAX_RANGE_HEADER_LENGTH`,
 * another unit, or names several ranges (then the whole body is sent).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (!header || header.length > MAX_RANGE_HEADER_LENGTH) return null;
  const match = BYTE_RANGE.exec(header);
  if (!match) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    // `-n`: the last n bytes (all of them when n is larger than the body).
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (!Number.isSafeInteger(start) || end < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}
