import { Messages } from '@logi/domain';
import { ref } from './openapi-components.js';
import type { JsonSchema } from './json-schema.js';

const integerHeader = (description: string, minimum = 0) => ({ description, schema: { type: 'integer', minimum } });

/** Response headers by their HTTP names; the ones a response lists are always sent with it (`required`). */
const HEADERS = {
  'X-Request-Id': {
    description: 'The request id: the one the client sent (up to 128 visible ASCII characters), else a new UUID. Every log line about the request carries it.',
    schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,128}$' },
  },
  'X-RateLimit-Limit': integerHeader('Requests allowed per window (RATE_LIMIT_MAX).'),
  'X-RateLimit-Remaining': integerHeader('Requests left in this window after this one (0 on a 429).'),
  'X-RateLimit-Reset': integerHeader('When the current window ends, Unix seconds.'),
  'RateLimit-Policy': {
    description: 'The quota policy (draft-ietf-httpapi-ratelimit-headers): `q` requests per window of `w` seconds, per client directory.',
    schema: { type: 'string', pattern: '^"default";q=\\d+;w=\\d+$' },
    example: '"default";q=60;w=60',
  },
  RateLimit: {
    description:
      'The quota left (draft-ietf-httpapi-ratelimit-headers): `r` requests remain (equal to X-RateLimit-Remaining), the window resets in `t` seconds.',
    schema: { type: 'string', pattern: '^"default";r=\\d+;t=\\d+$' },
    example: '"default";r=59;t=60',
  },
  'Retry-After': integerHeader('Whole seconds to wait before trying again.', 1),
  ETag: {
    description: 'A weak validator of this exact body; send it back in `If-None-Match` to get 304 and no body while the answer is unchanged.',
    schema: { type: 'string', pattern: '^W/"[A-Za-z0-9_-]{27}"$' },
    example: 'W/"3qD0vFh0hL6bTq9m3V8o0cYt1n2"',
  },
  'ETag (PDF)': {
    description:
      "A strong validator: the SHA-256 (hex) of everything printed (the invoice and its related rows, the seller's company data, `lang`, `duplicate`) and the template's version; for `format=facturx` also of the embedded e-invoice and its writer's version. Any change to them gives another value; send it back in `If-None-Match` to get 304 and no body while the document is unchanged.",
    schema: { type: 'string', pattern: '^"[0-9a-f]{64}"$' },
    example: '"9f2c4e0b7d1a3c5e8f6b2d4a0c1e3f5a7b9d2c4e6f8a0b1c3d5e7f9a2b4c6d8e"',
  },
  'ETag (e-invoice)': {
    description:
      "A strong validator: the SHA-256 (hex) of the e-invoice's data (the invoice, its related rows, the seller's company data, the texts in `lang`), the syntax and the writer's version. Send it back in `If-None-Match` to get 304 and no body while the document is unchanged.",
    schema: { type: 'string', pattern: '^"[0-9a-f]{64}"$' },
    example: '"4b1e0c7d9f2a3c5e8f6b2d4a0c1e3f5a7b9d2c4e6f8a0b1c3d5e7f9a2b4c6d8e"',
  },
  'ETag (file)': {
    description:
      'A strong validator: the SHA-256 (hex) of the stored bytes, as `sha256` in the file list. Send it back in `If-None-Match` to get 304 and no body, or in `If-Range` to resume a download.',
    schema: { type: 'string', pattern: '^"[0-9a-f]{64}"$' },
    example: '"2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"',
  },
  'Accept-Ranges': { description: 'Byte ranges are served (one range per request).', schema: { type: 'string', const: 'bytes' } },
  'Content-Length': { description: 'Bytes in this answer: the whole file, or the range.', schema: { type: 'integer', minimum: 0 } },
  'Content-Range': {
    description: 'The range sent and the whole size: `bytes <first>-<last>/<size>`.',
    schema: { type: 'string', pattern: '^bytes \\d+-\\d+/\\d+$' },
    example: 'bytes 0-1023/48213',
  },
  'Content-Range (416)': {
    description: 'The size of the file, for a client to ask again: `bytes */<size>`.',
    schema: { type: 'string', pattern: '^bytes \\*/\\d+$' },
    example: 'bytes */48213',
  },
  'Content-Disposition (file)': {
    description:
      "`attachment` with the file's name: `filename` an ASCII fallback (any other character, and `\"`, `\\` and `%`, become `_`), plus `filename*=UTF-8''…` (RFC 6266, RFC 8187) with the exact name when the fallback differs.",
    schema: { type: 'string' },
    example: `attachment; filename="_d__ CMR.pdf"; filename*=UTF-8''%C5%81%C3%B3d%C5%BA%20CMR.pdf`,
  },
  'Cache-Control (no-store)': {
    description: 'A link is a credential for the file: no cache may keep this answer.',
    schema: { type: 'string', const: 'no-store' },
  },
  'Cache-Control': {
    description: 'The answer may be kept by the client only, and must be revalidated before each use.',
    schema: { type: 'string', const: 'private, no-cache' },
  },
  Allow: { description: 'The methods the path takes.', schema: { type: 'string' }, example: 'HEAD, GET, OPTIONS' },
  'Content-Disposition': {
    description:
      'The invoice number made file-safe (every character but ASCII letters, digits, `-` and `.` becomes `_`), plus an RFC 5987 `filename*` when the number is not ASCII.',
    schema: { type: 'string' },
    example: 'attachment; filename="FV_11_2026_0007.pdf"',
  },
} as const;

export type HeaderName = keyof typeof HEADERS;

/** Headers of every response that counted against the rate limit. */
export const COUNTED: HeaderName[] = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];

const UNCOUNTED_NOTE =
  " Absent only when the request went through uncounted: the rate limiter's store did not answer, and the limiter let it through (fails open).";

/**
 * The headers a response lists, each sent with it (`required`), save one
 * case: a request the rate limiter could not count (its store did not
 * answer) goes through without the rate-limit headers, so those are
 * required only where the limiter must have counted (`countedAlways`: a 429).
 * Entries whose name has a note in brackets, `ETag (PDF)`, are a variant sent under the plain name.
 */
export function responseHeaders(names: readonly HeaderName[], options: { countedAlways?: boolean } = {}): Record<string, unknown> {
  return Object.fromEntries(
    (['X-Request-Id', ...names] as HeaderName[]).map((name) => {
      const maybeUncounted = COUNTED.includes(name) && !options.countedAlways;
      const header = maybeUncounted
        ? { ...HEADERS[name], description: HEADERS[name].description + UNCOUNTED_NOTE, required: false }
        : { ...HEADERS[name], required: true };
      return [name.replace(/ \(.*\)$/, ''), header];
    }),
  );
}

export function jsonResponse(description: string, schema: JsonSchema, headerNames: readonly HeaderName[] = COUNTED, example?: unknown) {
  return {
    description,
    headers: responseHeaders(headerNames),
    content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } },
  };
}

/** An error envelope with its status and its message: exact, one of a few, or a pattern. */
export function errorResponse(
  status: number,
  description: string,
  message: string | readonly string[] | { pattern: string; example: string },
  headerNames: readonly HeaderName[] = COUNTED,
) {
  const messageSchema = typeof message === 'string' ? { const: message } : isMessageList(message) ? { enum: [...message] } : { pattern: message.pattern };
  const exampleMessage = typeof message === 'string' ? message : isMessageList(message) ? message[0]! : message.example;
  const response = jsonResponse(
    description,
    { allOf: [ref('ErrorEnvelope'), { properties: { status: { const: status }, message: messageSchema } }] },
    headerNames,
    { status, message: exampleMessage, data: null },
  );
  // Only a limiter that counted can refuse.
  return status === 429 ? { ...response, headers: responseHeaders(headerNames, { countedAlways: true }) } : response;
}

function isMessageList(message: readonly string[] | { pattern: string }): message is readonly string[] {
  return Array.isArray(message);
}

/** A 422 whose body is the validation envelope, with `errors` naming the fields. */
export function validationResponse(description: string, messageSchema: JsonSchema, example: unknown) {
  return jsonResponse(description, { allOf: [ref('ValidationErrorEnvelope'), { properties: { message: messageSchema } }] }, COUNTED, example);
}

/**
 * Refusals of the request itself, before any route reads it, the same for
 * every operation: shared responses (`#/components/responses/...`), listed
 * by each operation. Each closes the connection.
 */
export function sharedResponses() {
  return {
    BadRequest: errorResponse(
      400,
      'The request is not well-formed HTTP (a control byte in a header value, a malformed request line or header): refused before anything reads it. The connection is closed after the answer.',
      Messages.BAD_REQUEST,
      [],
    ),
    UriTooLong: errorResponse(414, 'The query string is over 8 KiB. The connection is closed after the answer.', Messages.URI_TOO_LONG, []),
    HeaderFieldsTooLarge: errorResponse(
      431,
      'The header fields are over 64 KiB together, each counted as its `Name: value` line with CRLF, however many fields there are. The connection is closed after the answer.',
      Messages.HEADER_FIELDS_TOO_LARGE,
      [],
    ),
  };
}

const responseRef = (name: keyof ReturnType<typeof sharedResponses>) => ({ $ref: `#/components/responses/${name}` });

/** The answers every client endpoint can give, whatever it does. */
export function commonErrors() {
  return {
    '400': responseRef('BadRequest'),
    '401': errorResponse(401, 'Credentials missing or invalid: both the bearer key and the client directory are needed.', Messages.AUTHENTICATION_FAILED),
    '405': errorResponse(
      405,
      'The path exists but does not take this method; `Allow` lists the ones it does. Not counted against the rate limit.',
      Messages.METHOD_NOT_ALLOWED,
      ['Allow'],
    ),
    '414': responseRef('UriTooLong'),
    '431': responseRef('HeaderFieldsTooLarge'),
    '429': errorResponse(
      429,
      'Too many requests in this window: counted per client directory, or per IP when the credentials are not valid.',
      Messages.TOO_MANY_ATTEMPTS,
      [...COUNTED, 'Retry-After'],
    ),
    '500': errorResponse(500, 'Something unexpected; the details are logged with the request id and never sent.', Messages.SERVER_ERROR, []),
    '503': errorResponse(
      503,
      'A dependency (database, queue, PDF renderer) is gone, or the job did not finish in time. Nothing was half-written; try again after `Retry-After`.',
      Messages.SERVICE_UNAVAILABLE,
      ['Retry-After'],
    ),
  };
}
