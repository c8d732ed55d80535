import type { Middleware } from 'koa';
import { HttpError } from '../http/http-error.js';

export const MAX_QUERY_BYTES = 8 * 1024;
export const MAX_HEADER_BYTES = 64 * 1024;
/**
 * What Node's parser reads of a request head before it refuses the request
 * itself. Above the app's own limits, so that heads up to this size are
 * judged here, exactly: which part is too long decides 414 or 431, and past
 * the parser's limit only the packet it stopped on is left to tell
 * (`answerClientError`). Bounded, since every open connection may hold this much.
 */
export const PARSER_HEAD_BYTES = 256 * 1024;
/**
 * How many header fields Node's parser keeps: all of them (0). By default it
 * keeps the first 2,000 entries of `rawHeaders` (about 1,000 fields) and drops
 * the rest without a word, so 3,000 short fields (119 KB) would be measured
 * as 40 KB and let through. The head is bounded by `PARSER_HEAD_BYTES` anyway.
 */
export const PARSER_HEADER_COUNT = 0;

/** The header block as it came: each `Name: value` line with its CRLF (every field, as the server keeps them all: `PARSER_HEADER_COUNT`). */
function headerBytes(rawHeaders: string[]): number {
  let bytes = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) bytes += Buffer.byteLength(rawHeaders[i]!) + Buffer.byteLength(rawHeaders[i + 1]!) + 4;
  return bytes;
}

/**
 * A query string over 8 KiB is a 414, headers over 64 KiB a 431, before
 * anything else reads them; both close the connection, as Node's own
 * refusal of a larger head does.
 */
export function requestHeadLimit(): Middleware {
  return async (ctx, next) => {
    if (Buffer.byteLength(ctx.querystring) > MAX_QUERY_BYTES) throw new HttpError(414, undefined, { Connection: 'close' });
    if (headerBytes(ctx.req.rawHeaders) > MAX_HEADER_BYTES) throw new HttpError(431, undefined, { Connection: 'close' });
    await next();
  };
}
