import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { MAX_QUERY_BYTES } from '../middleware/request-head-limit.middleware.js';
import { MESSAGE_BY_STATUS } from './error-statuses.js';

/**
 * The http server's `clientError` handler. Node refuses some requests before
 * the app sees them (request line and headers over `PARSER_HEAD_BYTES`, bytes that
 * are not HTTP) and would answer with an empty body; clients are promised the
 * envelope on every answer, and a query string over 8 KiB is a 414 however
 * long it is.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void {
  // Nobody is left to read an answer.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? (requestLineTooLong(error.rawPacket) ? 414 : 431) : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message = MESSAGE_BY_STATUS[status]!;
  const body = JSON.stringify({ status, message, data: null });
  const head = [
    `HTTP/1.1 ${status} ${message}`,
    // Every answer carries a request id; the client's cannot be read from a head the parser refused.
    `X-Request-Id: ${randomUUID()}`,
    'Content-Type: application/json; charset=utf-8',
    'X-Content-Type-Options: nosniff',
    `Content-Length: ${Buffer.byteLength(body)}`,
    // The parser has lost its place in the stream: this connection can carry nothing more.
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
}

/**
 * Whether a head Node refused (over `PARSER_HEAD_BYTES`) was refused for its request line, told from the one packet Node
 * hands over; when it cannot be told, 414 (docs/contribute/decisions/0030-oversized-head-414-or-431.md).
 */
function requestLineTooLong(packet: Buffer | undefined): boolean {
  if (!packet) return false;
  const lines = packet.toString('latin1').split('\r\n');
  const first = lines[0]!;
  if (/^[A-Z]+ /.test(first)) return first.length > MAX_QUERY_BYTES;
  if (lines.length === 1 || / HTTP\/\d\.\d$/.test(first)) return true;
  return lines.every((line) => line.length <= MAX_QUERY_BYTES);
}
