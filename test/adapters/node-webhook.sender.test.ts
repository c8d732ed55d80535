/**
 * The webhook sender against real receivers on 127.0.0.1 (issue 18): what
 * arrives, what an answer or its absence becomes, and the SSRF guards: no
 * redirect followed, a bounded answer read, non-public targets refused by
 * their literal address and by the address a name resolves to at delivery
 * time (a rebinding resolver is played by an injected lookup).
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeWebhookSender, type WebhookLookup } from '@logi/adapters';
import { isForbiddenAddress, type WebhookRequest } from '@logi/domain';
import { freePort } from '../support/free-port.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver that records connections and requests and answers as its handler says. */
interface Receiver {
  port: number;
  connections: number;
  requests: Received[];
}

const servers: Array<http.Server | https.Server> = [];

async function startReceiver(handler: Handler, server: http.Server | https.Server = http.createServer()): Promise<Receiver> {
  const receiver: Receiver = { port: 0, connections: 0, requests: [] };
  server.on('connection', () => receiver.connections++);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      receiver.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  servers.push(server);
  return receiver;
}

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    }),
  );
});

const HEADERS = {
  'content-type': 'application/json',
  'webhook-id': '42',
  'webhook-timestamp': '1790000000',
  'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1,3Xo8ZgOlP3pGCzHdxJxVUbpu+zU5kT3bN3h3GoM+tWo=',
};
const BODY = JSON.stringify({ id: 42, type: 'invoice.updated', created: 1790000000, data: { object: { nr: 'FV/2026/Łódź/0001', note: 'zażółć 🚚' } } });

function attempt(url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest {
  return { url, headers: HEADERS, body: BODY, timeoutMs: 5_000, allowPrivateTargets: true, ...overrides };
}

/** A resolver that answers every name with the given addresses and counts its calls. */
function fixedLookup(...addresses: string[]): WebhookLookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = ((hostname, _options, callback) => {
    calls.push(hostname);
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  }) as WebhookLookup & { calls: string[] };
  lookup.calls = calls;
  return lookup;
}

describe('NodeWebhookSender: answers', () => {
  it('when the receiver answers 2xx, then the attempt is answered with its status, and the headers and body arrived exactly as given', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(204).end());
    const result = await new NodeWebhookSender().send(attempt(`http://127.0.0.1:${receiver.port}/hooks/in?tenant=7#not-sent`));
    expect(result).toEqual({ kind: 'answered', status: 204 });
    expect(receiver.requests).toHaveLength(1);
    const [received] = receiver.requests;
    expect(received!.method).toBe('POST');
    expect(received!.url).toBe('/hooks/in?tenant=7');
    expect(received!.body).toBe(BODY);
    expect(received!.headers).toMatchObject({ ...HEADERS, 'content-length': String(Buffer.byteLength(BODY)), host: `127.0.0.1:${receiver.port}` });
  });

  it('when the receiver answers 500, then the attempt is answered 500 (a non-2xx answer, not a failure to send)', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(500).end('boom'));
    expect(await new NodeWebhookSender().send(attempt(`http://127.0.0.1:${receiver.port}/`))).toEqual({ kind: 'answered', status: 500 });
  });

  it('when the receiver redirects, then the attempt is answered with the 3xx and the Location is never fetched', async () => {
    const elsewhere = await startReceiver((_req, res) => res.writeHead(200).end());
    const receiver = await startReceiver((_req, res) => res.writeHead(302, { Location: `http://127.0.0.1:${elsewhere.port}/metadata` }).end());
    const result = await new NodeWebhookSender().send(attempt(`http://127.0.0.1:${receiver.port}/hooks`));
    expect(result).toEqual({ kind: 'answered', status: 302 });
    expect(receiver.requests).toHaveLength(1);
    expect(elsewhere.connections).toBe(0);
  });

  it('when the answer body is huge, then the sender stops reading after 64 KiB, closes the connection and returns promptly', async () => {
    const total = 50 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let written = 0;
    let closed!: Promise<void>;
    const receiver = await startReceiver((_req, res) => {
      closed = new Promise((resolve) => res.on('close', resolve));
      res.writeHead(200, { 'Content-Length': String(total) });
      const pump = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const started = Date.now();
    const result = await new NodeWebhookSender().send(attempt(`http://127.0.0.1:${receiver.port}/`, { timeoutMs: 20_000 }));
    expect(result).toEqual({ kind: 'answered', status: 200 });
    expect(Date.now() - started).toBeLessThan(10_000);
    await closed;
    expect(written).toBeLessThan(total);
  });
});

describe('NodeWebhookSender: no answer', () => {
  it('when the receiver never answers, then the attempt fails as timed out after the given time', async () => {
    const receiver = await startReceiver(() => undefined);
    const started = Date.now();
    const result = await new NodeWebhookSender().send(attempt(`http://127.0.0.1:${receiver.port}/`, { timeoutMs: 300 }));
    expect(result).toEqual({ kind: 'failed', error: 'timed out after 300 ms', reason: 'timed out', refused: false });
    expect(receiver.requests).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('when the name never resolves, then the same deadline ends the attempt', async () => {
    const stuck: WebhookLookup = () => undefined;
    const result = await new NodeWebhookSender({ lookup: stuck }).send(attempt('https://hooks.example.com/', { timeoutMs: 300, allowPrivateTargets: false }));
    expect(result).toEqual({ kind: 'failed', error: 'timed out after 300 ms', reason: 'timed out', refused: false });
  });

  it('when the receiver destroys the connection, then the attempt fails as connection reset', async () => {
    const receiver = await startReceiver((req) => req.socket.destroy());
    const result = await new NodeWebhookSender().send(attempt(`http://127.0.0.1:${receiver.port}/`));
    expect(result).toEqual({ kind: 'failed', error: 'connection reset', reason: 'connection failed', refused: false });
    expect(receiver.requests).toHaveLength(1);
  });

  it('when nothing listens on the port, then the attempt fails as connection refused', async () => {
    const port = await freePort();
    expect(await new NodeWebhookSender().send(attempt(`http://127.0.0.1:${port}/`))).toEqual({
      kind: 'failed',
      error: 'connection refused',
      reason: 'connection failed',
      refused: false,
    });
  });

  it('when the name does not resolve, then the attempt fails as host not found, not as refused', async () => {
    const nowhere: WebhookLookup = (hostname, _options, callback) =>
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    const result = await new NodeWebhookSender({ lookup: nowhere }).send(attempt('https://hooks.example.com/', { allowPrivateTargets: false }));
    expect(result).toEqual({ kind: 'failed', error: 'host not found', reason: 'host not found', refused: false });
  });

  it('when the certificate is not trusted, then the attempt fails with a TLS error and no request is sent', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end(), https.createServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }));
    const result = await new NodeWebhookSender({ lookup: fixedLookup('127.0.0.1') }).send(attempt(`https://hooks.example.com:${receiver.port}/`));
    expect(result).toMatchObject({ kind: 'failed', reason: 'TLS error', refused: false });
    expect(result.kind === 'failed' && result.error).toMatch(/^TLS error: self[- ]signed certificate/);
    expect(receiver.connections).toBe(1);
    expect(receiver.requests).toHaveLength(0);
  });

  it('when the certificate is trusted and names the host, then the attempt goes over TLS to the resolved address and is answered', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(202).end(), https.createServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }));
    const sender = new NodeWebhookSender({ lookup: fixedLookup('127.0.0.1'), ca: SELF_SIGNED_CERT });
    expect(await sender.send(attempt(`https://hooks.example.com:${receiver.port}/in`))).toEqual({ kind: 'answered', status: 202 });
    expect(await sender.send(attempt(`https://127.0.0.1:${receiver.port}/ip`))).toEqual({ kind: 'answered', status: 202 });
    expect(receiver.requests.map((r) => [r.url, r.headers.host, r.body])).toEqual([
      ['/in', `hooks.example.com:${receiver.port}`, BODY],
      ['/ip', `127.0.0.1:${receiver.port}`, BODY],
    ]);
  });

  it('when the certificate names another host, then the attempt fails with a TLS error', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end(), https.createServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }));
    const result = await new NodeWebhookSender({ lookup: fixedLookup('127.0.0.1'), ca: SELF_SIGNED_CERT }).send(
      attempt(`https://other.example.com:${receiver.port}/`),
    );
    expect(result.kind === 'failed' && result.error).toMatch(/^TLS error: .*other\.example\.com/);
    expect(receiver.requests).toHaveLength(0);
  });

  it('when a header cannot be sent, then the attempt fails with a reason instead of throwing', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const result = await new NodeWebhookSender().send(attempt(`http://127.0.0.1:${receiver.port}/`, { headers: { ...HEADERS, 'x-note': 'line\nbreak' } }));
    expect(result).toMatchObject({ kind: 'failed', refused: false });
    expect(result.kind === 'failed' && result.error).toBe('invalid request header "x-note"');
    expect(receiver.connections).toBe(0);
  });
});

describe('NodeWebhookSender: targets that are not public', () => {
  it.each([
    ['https://127.0.0.1:{port}/', 'refused: address 127.0.0.1 is not public'],
    ['https://2130706433:{port}/', 'refused: address 127.0.0.1 is not public'],
    ['https://0x7f.1:{port}/', 'refused: address 127.0.0.1 is not public'],
    ['https://[::ffff:127.0.0.1]:{port}/', 'refused: address ::ffff:7f00:1 is not public'],
    ['https://[::1]:{port}/', 'refused: address ::1 is not public'],
    ['https://localhost:{port}/', 'refused: host localhost is not public'],
    ['https://LocalHost.:{port}/', 'refused: host localhost is not public'],
    ['http://hooks.example.com:{port}/', 'refused: not an https URL'],
  ])('when private targets are not allowed and the url is %s, then the attempt is refused before connecting', async (template, error) => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const lookup = fixedLookup('8.8.8.8');
    const result = await new NodeWebhookSender({ lookup }).send(attempt(template.replace('{port}', String(receiver.port)), { allowPrivateTargets: false }));
    expect(result).toEqual({
      kind: 'failed',
      error,
      reason: error.includes('https') ? 'refused: not an https URL' : 'refused: private address',
      refused: true,
    });
    expect(lookup.calls).toEqual([]);
    expect(receiver.connections).toBe(0);
  });

  it('when a public name resolves to a loopback address at delivery time (DNS rebinding), then the attempt is refused and nothing connects', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const lookup = fixedLookup('127.0.0.1');
    const result = await new NodeWebhookSender({ lookup }).send(attempt(`https://hooks.example.com:${receiver.port}/`, { allowPrivateTargets: false }));
    expect(result).toEqual({ kind: 'failed', error: 'refused: address 127.0.0.1 is not public', reason: 'refused: private address', refused: true });
    expect(lookup.calls).toEqual(['hooks.example.com']);
    expect(receiver.connections).toBe(0);
  });

  it('when a name resolves to a public and a private address, then the attempt is refused, whichever would be tried first', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    for (const lookup of [
      fixedLookup('8.8.8.8', '127.0.0.1'),
      fixedLookup('127.0.0.1', '8.8.8.8'),
      fixedLookup('2001:4860:4860::8888', '::ffff:169.254.169.254'),
    ]) {
      const result = await new NodeWebhookSender({ lookup }).send(attempt(`https://hooks.example.com:${receiver.port}/`, { allowPrivateTargets: false }));
      expect(result).toMatchObject({ kind: 'failed', reason: 'refused: private address', refused: true });
      expect(result.kind === 'failed' && result.error).toMatch(/^refused: address (127\.0\.0\.1|::ffff:169\.254\.169\.254) is not public$/);
    }
    expect(receiver.connections).toBe(0);
  });

  it('when private targets are allowed, then loopback addresses, localhost and names resolving to them are delivered to', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const lookup = fixedLookup('127.0.0.1');
    const sender = new NodeWebhookSender({ lookup });
    for (const url of [`http://127.0.0.1:${receiver.port}/a`, `http://2130706433:${receiver.port}/b`, `http://hooks.example.com:${receiver.port}/c`]) {
      expect(await sender.send(attempt(url)), url).toEqual({ kind: 'answered', status: 200 });
    }
    expect(await new NodeWebhookSender().send(attempt(`http://localhost:${receiver.port}/d`))).toEqual({ kind: 'answered', status: 200 });
    expect(receiver.requests.map((r) => r.url)).toEqual(['/a', '/b', '/c', '/d']);
    expect(receiver.requests[2]!.headers.host).toBe(`hooks.example.com:${receiver.port}`);
  });
});

describe('NodeWebhookSender: kept-alive connections per origin', () => {
  const senders: NodeWebhookSender[] = [];
  const sender = (options: ConstructorParameters<typeof NodeWebhookSender>[0] = {}) => {
    const made = new NodeWebhookSender(options);
    senders.push(made);
    return made;
  };
  afterEach(() => {
    for (const made of senders.splice(0)) made.close();
  });

  it('when attempts to one origin follow each other, then they share one connection, whatever the path and the answer', async () => {
    let n = 0;
    const receiver = await startReceiver((_req, res) => res.writeHead(n++ % 2 === 0 ? 200 : 500).end('answer'));
    const webhooks = sender();
    const results = [];
    for (let k = 0; k < 10; k++) results.push(await webhooks.send(attempt(`http://127.0.0.1:${receiver.port}/hooks/${k % 3}`)));
    expect(results.map((r) => r.kind === 'answered' && r.status)).toEqual([200, 500, 200, 500, 200, 500, 200, 500, 200, 500]);
    expect(receiver.requests).toHaveLength(10);
    expect(receiver.connections).toBe(1);
    expect(webhooks.origins).toBe(1);
  });

  it('when more attempts to one origin are in flight than its bound, then no more connections than the bound are opened and every attempt is answered', async () => {
    const open = new Set<unknown>();
    let mostOpen = 0;
    const receiver = await startReceiver((_req, res) => setTimeout(() => res.writeHead(204).end(), 20));
    const server = servers.at(-1)!;
    server.on('connection', (socket) => {
      open.add(socket);
      mostOpen = Math.max(mostOpen, open.size);
      socket.on('close', () => open.delete(socket));
    });
    const webhooks = sender({ maxSocketsPerOrigin: 3 });
    const results = await Promise.all(Array.from({ length: 24 }, (_, k) => webhooks.send(attempt(`http://127.0.0.1:${receiver.port}/${k}`))));
    expect(results.every((r) => r.kind === 'answered' && r.status === 204)).toBe(true);
    expect(receiver.requests).toHaveLength(24);
    expect(receiver.connections).toBe(3);
    expect(mostOpen).toBe(3);
  });

  /**
   * A name that resolves to `addresses[k]` at its k-th lookup (the last one after), with 127.0.0.1 playing a public
   * address (the receiver is there) and 10.0.0.1 the private address a rebinding receiver turns to.
   */
  function rebindingLookup(...answers: string[]): WebhookLookup & { calls: string[] } {
    const calls: string[] = [];
    const lookup = ((hostname, _options, callback) => {
      calls.push(hostname);
      const address = answers[Math.min(calls.length - 1, answers.length - 1)]!;
      callback(null, [{ address, family: 4 }]);
    }) as WebhookLookup & { calls: string[] };
    lookup.calls = calls;
    return lookup;
  }
  const publicLoopback = (address: string) => address !== '127.0.0.1' && isForbiddenAddress(address);

  it('when a connection is reused and the name has since rebound to a private address, then the reused one delivers and the next new one is refused', async () => {
    const receiver = await startReceiver(
      (_req, res) => setTimeout(() => res.writeHead(200).end(), 50),
      https.createServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }),
    );
    const lookup = rebindingLookup('127.0.0.1', '10.0.0.1');
    const webhooks = sender({ lookup, ca: SELF_SIGNED_CERT, isForbiddenAddress: publicLoopback });
    const url = `https://hooks.example.com:${receiver.port}/in`;
    const strict = { allowPrivateTargets: false };
    expect(await webhooks.send(attempt(url, strict))).toEqual({ kind: 'answered', status: 200 });
    expect(await webhooks.send(attempt(url, strict))).toEqual({ kind: 'answered', status: 200 });
    expect(lookup.calls).toHaveLength(1);
    // Two at once: one takes the kept-alive connection (checked when it was made), the other needs a new one.
    const both = await Promise.all([webhooks.send(attempt(url, strict)), webhooks.send(attempt(url, strict))]);
    expect(both).toEqual(
      expect.arrayContaining([
        { kind: 'answered', status: 200 },
        { kind: 'failed', error: 'refused: address 10.0.0.1 is not public', reason: 'refused: private address', refused: true },
      ]),
    );
    expect(lookup.calls).toHaveLength(2);
    expect(receiver.connections).toBe(1);
    expect(receiver.requests).toHaveLength(3);
  });

  it('when a kept-alive connection was idle past the idle time, then the next attempt opens a new one and checks it: a name rebound to a private address is refused', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end(), https.createServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }));
    const lookup = rebindingLookup('127.0.0.1', '10.0.0.1');
    const webhooks = sender({ lookup, ca: SELF_SIGNED_CERT, isForbiddenAddress: publicLoopback, idleSocketMs: 100 });
    const url = `https://hooks.example.com:${receiver.port}/in`;
    const strict = { allowPrivateTargets: false };
    const closed = new Promise((resolve) => servers.at(-1)!.once('connection', (socket: Socket) => socket.once('close', resolve)));
    expect(await webhooks.send(attempt(url, strict))).toEqual({ kind: 'answered', status: 200 });
    // Closed by the sender after 100 ms idle (the receiver would keep it 5 s).
    await closed;
    expect(await webhooks.send(attempt(url, strict))).toEqual({
      kind: 'failed',
      error: 'refused: address 10.0.0.1 is not public',
      reason: 'refused: private address',
      refused: true,
    });
    expect(lookup.calls).toHaveLength(2);
    expect(receiver.connections).toBe(1);
    expect(receiver.requests).toHaveLength(1);
  });

  it('when the receiver closes every connection after its answer, then every attempt is still delivered, each on a new checked connection', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200, { Connection: 'close' }).end());
    const lookup = fixedLookup('127.0.0.1');
    const webhooks = sender({ lookup });
    const results = [];
    for (let k = 0; k < 5; k++) results.push(await webhooks.send(attempt(`http://hooks.example.com:${receiver.port}/${k}`)));
    expect(results.every((r) => r.kind === 'answered' && r.status === 200)).toBe(true);
    expect(receiver.requests).toHaveLength(5);
    expect(receiver.connections).toBe(5);
    expect(lookup.calls).toHaveLength(5);
  });

  it('when the receiver keeps connections alive for less than the sender would (announced in Keep-Alive), then every attempt is still delivered, on a new connection', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const server = servers.at(-1)! as http.Server;
    // The receiver's keep-alive is shorter than the sender's idle time: it closes connections the sender would reuse.
    server.keepAliveTimeout = 30;
    const closes: Array<Promise<unknown>> = [];
    server.on('connection', (socket: Socket) => closes.push(new Promise((resolve) => socket.once('close', resolve))));
    const webhooks = sender({ idleSocketMs: 10_000 });
    for (let k = 0; k < 4; k++) {
      expect(await webhooks.send(attempt(`http://127.0.0.1:${receiver.port}/${k}`))).toEqual({ kind: 'answered', status: 200 });
      await Promise.all(closes);
    }
    expect(receiver.connections).toBe(4);
    expect(receiver.requests).toHaveLength(4);
  });

  it('when the receiver resets a kept-alive connection, then that attempt fails as a reset (not sent again at once) and the next one is answered on a new connection', async () => {
    let n = 0;
    const receiver = await startReceiver((req, res) => (n++ === 1 ? req.socket.destroy() : res.writeHead(200).end()));
    const webhooks = sender();
    const url = `http://127.0.0.1:${receiver.port}/`;
    expect(await webhooks.send(attempt(url))).toEqual({ kind: 'answered', status: 200 });
    expect(await webhooks.send(attempt(url))).toEqual({ kind: 'failed', error: 'connection reset', reason: 'connection failed', refused: false });
    expect(await webhooks.send(attempt(url))).toEqual({ kind: 'answered', status: 200 });
    expect(receiver.requests).toHaveLength(3);
    expect(receiver.connections).toBe(2);
  });

  it('when an origin has not been used for the idle-origin time, then its pool is destroyed on the next attempt', async () => {
    const first = await startReceiver((_req, res) => res.writeHead(200).end());
    const second = await startReceiver((_req, res) => res.writeHead(200).end());
    let clock = 1_000;
    const webhooks = sender({ idleOriginMs: 100, now: () => clock });
    await webhooks.send(attempt(`http://127.0.0.1:${first.port}/`));
    expect(webhooks.origins).toBe(1);
    clock += 150;
    await webhooks.send(attempt(`http://127.0.0.1:${second.port}/`));
    expect(webhooks.origins).toBe(1);
  });
});

// A self-signed certificate for hooks.example.com and 127.0.0.1 (valid until 2126), trusted by nobody.
const SELF_SIGNED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgGkvU2uSnfZiPqh6+
0zBELZBdmcLvdkem/EJpNSqBKnuhRANCAAQIIFhzHSJAfVooE2n57PSMzHw5FE22
2FG1SEznUMGLLuILPM97mdeQC7WTM3BjedeorMbxFqTBftYZQA5RKCQe
-----END PRIVATE KEY-----
`;
const SELF_SIGNED_CERT = `-----BEGIN CERTIFICATE-----
MIIBtDCCAVmgAwIBAgIUES3MPEs4oFPOKzf65bpe4TO7NOgwCgYIKoZIzj0EAwIw
HDEaMBgGA1UEAwwRaG9va3MuZXhhbXBsZS5jb20wIBcNMjYxMTI0MDQwNDMyWhgP
MjEyNjEwMzEwNDA0MzJaMBwxGjAYBgNVBAMMEWhvb2tzLmV4YW1wbGUuY29tMFkw
EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAECCBYcx0iQH1aKBNp+ez0jMx8ORRNtthR
tUhM51DBiy7iCzzPe5nXkAu1kzNwY3nXqKzG8RakwX7WGUAOUSgkHqN3MHUwHQYD
VR0OBBYEFEHrayptJJNeMLjqy9D07Ckl+zxCMB8GA1UdIwQYMBaAFEHrayptJJNe
MLjqy9D07Ckl+zxCMA8GA1UdEwEB/wQFMAMBAf8wIgYDVR0RBBswGYIRaG9va3Mu
ZXhhbXBsZS5jb22HBH8AAAEwCgYIKoZIzj0EAwIDSQAwRgIhAMJiu2XbApEzVKY6
EgQ82GePF8drHNBNTWU34Zo3M85tAiEAp+Y+dWHdo12LI7W1Tp44VG7qDN5xznCC
r1BBgvFYiAg=
-----END CERTIFICATE-----
`;
