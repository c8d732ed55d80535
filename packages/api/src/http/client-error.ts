import type { Duplex } from 'node:stream';
import { MAX_QUERY_BYTES } from '../middleware/query-limit.middleware.js';
import { MESSAGE_BY_STATUS } from './error-statuses.js';

/**
 * The http server's `clientError` handler. Node refuses some requests before
 * the app sees them (request line and headers over `maxHeaderSize`, bytes that
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
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    // The parser has lost its place in the stream: this connection can carry nothing more.
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
}

/**
 * Whether the packet on which the headers overflowed shows a request line
 * over the query limit. Node hands over only that packet: either it starts
 * the request (then its first line is the request line), or it continues a
 * line begun earlier, which is the request line when it ends with the version.
 */
function requestLineTooLong(packet: Buffer | undefined): boolean {
  if (!packet) return false;
  const text = packet.toString('latin1');
  const lineEnd = text.indexOf('\r\n');
  const line = lineEnd === -1 ? text : text.slice(0, lineEnd);
  if (/^[A-Z]+ /.test(text)) return Buffer.byteLength(line, 'latin1') > MAX_QUERY_BYTES;
  return lineEnd !== -1 && / HTTP\/\d\.\d$/.test(line);
}
