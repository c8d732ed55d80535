import net from 'node:net';

/**
 * Sends a request byte for byte over a fresh connection (fetch and node:http
 * refuse a header with a control byte, or fix what they send) and reads the
 * answer until the server closes: the request should ask for that with
 * `Connection: close`. The answer comes back as a fetch Response, so the
 * same checks apply to it as to any other.
 */
export function rawRequest(root: string, head: string, body: Buffer = Buffer.alloc(0)): Promise<Response> {
  const { hostname, port } = new URL(root);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body])));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close while the request is still being sent (a 431, say): its answer is what counts.
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    socket.on('close', () => {
      try {
        resolve(toResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
  });
}

function toResponse(raw: Buffer): Response {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) throw new Error(`no answer head in ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`);
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const [, code, statusText] = /^HTTP\/1\.1 (\d{3}) ?(.*)$/.exec(statusLine!) ?? [];
  if (!code) throw new Error(`not a status line: ${statusLine}`);
  const headers = lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as [string, string]);
  const status = Number(code);
  let body = raw.subarray(end + 4);
  if (headers.some(([name, value]) => name.toLowerCase() === 'transfer-encoding' && value.toLowerCase() === 'chunked')) body = unchunk(body);
  return new Response(status === 204 || status === 304 ? null : body, { status, statusText, headers });
}

function unchunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
