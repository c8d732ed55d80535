import dns, { type LookupAddress, type LookupAllOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { checkWebhookUrl, isForbiddenAddress, WebhookUrlMessages, type WebhookAttemptResult, type WebhookRequest, type WebhookSenderPort } from '@logi/domain';

/** The shape of `dns.lookup` with `all: true`; a test passes its own to play a rebinding resolver. */
export type WebhookLookup = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface NodeWebhookSenderOptions {
  /** Resolves the target's name; `dns.lookup` (every address of both families) unless given. */
  lookup?: WebhookLookup;
  /** Certificate authorities to trust instead of Node's bundled ones (tests; a receiver signed by a private CA). */
  ca?: string | Buffer | Array<string | Buffer>;
}

/** Enough of an answer to end it cleanly; a receiver cannot make a delivery read more. */
const ANSWER_READ_LIMIT = 64 * 1024;
const REFUSED = 'ERR_WEBHOOK_TARGET_REFUSED';
const REASON_MAX_LENGTH = 200;

interface Target {
  url: URL;
  host: string;
  ipLiteral: boolean;
}

/**
 * Sends webhooks with node:http and node:https rather than fetch or undici:
 * every socket is made here (no agent, so no pool a slow receiver could hold
 * and no connection reused past its check), the name is resolved through a
 * lookup that judges every address before one is connected to, and the
 * connected socket's own address is judged again before a byte is written.
 * Nothing here follows redirects: a 3xx is an answer like any other non-2xx.
 */
export class NodeWebhookSender implements WebhookSenderPort {
  private readonly lookup: WebhookLookup;
  private readonly ca: NodeWebhookSenderOptions['ca'];

  constructor(options: NodeWebhookSenderOptions = {}) {
    this.lookup = options.lookup ?? dns.lookup;
    this.ca = options.ca;
  }

  async send(request: WebhookRequest): Promise<WebhookAttemptResult> {
    try {
      const target = checkTarget(request);
      if ('refusal' in target) return { kind: 'failed', error: `refused: ${target.refusal}`, refused: true };
      return await deliver(target, request, this.lookup, this.ca);
    } catch (error) {
      // Whatever Node throws (an option it rejects, say) ends this attempt as failed; the caller's loop goes on.
      return { kind: 'failed', ...reasonOf(error, false) };
    }
  }
}

/** The same rules as at registration: the URL may have been stored before the operator changed WEBHOOK_ALLOW_PRIVATE_TARGETS. */
function checkTarget(request: WebhookRequest): Target | { refusal: string } {
  const syntax = checkWebhookUrl(request.url, { allowPrivateTargets: true });
  if (!syntax.ok) return { refusal: syntax.message };
  if (request.allowPrivateTargets) return syntax;
  const strict = checkWebhookUrl(request.url, { allowPrivateTargets: false });
  if (strict.ok) return strict;
  if (strict.message === WebhookUrlMessages.NOT_HTTPS) return { refusal: 'not an https URL' };
  return { refusal: syntax.ipLiteral ? `address ${syntax.host} is not public` : `host ${syntax.host} is not public` };
}

function deliver(target: Target, request: WebhookRequest, lookup: WebhookLookup, ca: NodeWebhookSenderOptions['ca']): Promise<WebhookAttemptResult> {
  return new Promise((resolve) => {
    const secure = target.url.protocol === 'https:';
    let status: number | undefined;
    let handshaking = false;
    let settled = false;
    let req: http.ClientRequest | undefined;

    const finish = (result: WebhookAttemptResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // No socket outlives the attempt: nothing is pooled, nothing keeps reading.
      req?.destroy();
      resolve(result);
    };
    const fail = (error: unknown): void => {
      if (status !== undefined) finish({ kind: 'answered', status });
      else finish({ kind: 'failed', ...reasonOf(error, secure && handshaking) });
    };
    // One deadline for the whole attempt, DNS included: the socket's own timeouts only count idle time.
    const timer = setTimeout(
      () => fail(Object.assign(new Error(`timed out after ${request.timeoutMs} ms`), { code: 'ERR_WEBHOOK_TIMEOUT' })),
      request.timeoutMs,
    );

    const guardedLookup: net.LookupFunction = (hostname, options, callback) => {
      lookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, []);
        // A rebinding resolver can hide one private address among public ones; any of them could be the one connected to.
        const forbidden = request.allowPrivateTargets ? undefined : addresses.find((a) => isForbiddenAddress(a.address));
        if (forbidden) return callback(refusedError(forbidden.address), []);
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`host ${hostname} not found`), { code: 'ENOTFOUND' }), []);
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      });
    };

    const connect = (): net.Socket => {
      const port = Number(target.url.port || (secure ? 443 : 80));
      const socket = secure
        ? tls.connect({
            host: target.host,
            port,
            lookup: guardedLookup,
            ALPNProtocols: ['http/1.1'],
            ...(target.ipLiteral ? {} : { servername: target.host }),
            ...(ca === undefined ? {} : { ca }),
          })
        : net.connect({ host: target.host, port, lookup: guardedLookup });
      // Runs before the TLS hello and before the request's buffered bytes are written, both of which also wait for `connect`.
      socket.prependOnceListener('connect', () => {
        handshaking = true;
        const remote = socket.remoteAddress;
        if (!request.allowPrivateTargets && (remote === undefined || isForbiddenAddress(remote))) socket.destroy(refusedError(remote ?? 'unknown'));
      });
      if (socket instanceof tls.TLSSocket) socket.once('secureConnect', () => (handshaking = false));
      return socket;
    };

    const headers = withoutContentLength(request.headers);
    const invalid = Object.entries(headers).find(([name, value]) => !isSendableHeader(name, value));
    if (invalid) return fail(Object.assign(new Error(`invalid request header ${JSON.stringify(invalid[0])}`), { code: 'ERR_WEBHOOK_HEADER' }));
    try {
      req = (secure ? https : http).request({
        method: 'POST',
        host: target.host,
        port: target.url.port || undefined,
        defaultPort: secure ? 443 : 80,
        path: `${target.url.pathname}${target.url.search}`,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(request.body)) },
        createConnection: connect,
      });
    } catch (error) {
      return fail(error);
    }
    req.on('error', fail);
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      const answered = { kind: 'answered', status } as const;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= ANSWER_READ_LIMIT) finish(answered);
      });
      // Reading a short answer to its end lets the receiver see a completed exchange rather than a reset.
      res.on('end', () => finish(answered));
      res.on('error', () => finish(answered));
      res.on('close', () => finish(answered));
    });
    req.end(request.body);
  });
}

function isSendableHeader(name: string, value: string): boolean {
  try {
    http.validateHeaderName(name);
    http.validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}

function withoutContentLength(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-length'));
}

function refusedError(address: string): Error {
  return Object.assign(new Error(`address ${address} is not public`), { code: REFUSED });
}

/** A short reason for the delivery log, the same for the same cause whatever Node's wording. */
function reasonOf(error: unknown, duringHandshake: boolean): { error: string; refused: boolean } {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const reason = (text: string, refused = false) => ({ error: text.length > REASON_MAX_LENGTH ? `${text.slice(0, REASON_MAX_LENGTH - 3)}...` : text, refused });
  switch (code) {
    case REFUSED:
      return reason(`refused: ${message}`, true);
    case 'ERR_WEBHOOK_TIMEOUT':
    case 'ERR_WEBHOOK_HEADER':
      return reason(message);
    case 'ECONNREFUSED':
      return reason('connection refused');
    case 'ECONNRESET':
    case 'EPIPE':
      return reason('connection reset');
    case 'ENOTFOUND':
    case 'ENODATA':
      return reason('host not found');
    case 'EAI_AGAIN':
      return reason('DNS lookup failed (EAI_AGAIN)');
    case 'ETIMEDOUT':
      return reason('connection timed out');
    case 'EHOSTUNREACH':
      return reason('host unreachable');
    case 'ENETUNREACH':
      return reason('network unreachable');
  }
  if (duringHandshake || code?.startsWith('ERR_TLS_') || code?.startsWith('ERR_SSL_')) return reason(`TLS error: ${tlsReason(message)}`);
  if (code?.startsWith('HPE_')) return reason(`invalid HTTP answer (${code})`);
  return reason(code ? `${code}: ${message}` : message);
}

/** OpenSSL's own text (`write EPROTO 80...:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:...`) says its reason in one field. */
function tlsReason(message: string): string {
  return /SSL routines:[^:]*:([^:]+)/.exec(message)?.[1] ?? message.split('\n')[0]!;
}
