import dns, { type LookupAddress, type LookupAllOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import {
  checkWebhookUrl,
  isForbiddenAddress,
  WebhookUrlMessages,
  type WebhookAttemptResult,
  type WebhookFailureReason,
  type WebhookRequest,
  type WebhookSenderPort,
} from '@logi/domain';

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
  /** Which resolved or connected addresses are not public: the domain's rule unless given (tests play a public address on 127.0.0.1). */
  isForbiddenAddress?: (address: string) => boolean;
  /**
   * Connections open at once to one origin (scheme, host, port), in use or idle: WEBHOOK_CONCURRENCY in the
   * composition roots (the delivering loop already bounds each endpoint; several endpoints may share an origin).
   * An attempt beyond it waits for a connection, within its own deadline.
   */
  maxSocketsPerOrigin?: number;
  /** An idle kept-alive connection is closed after this long (ms); the next attempt makes, and checks, a new one. */
  idleSocketMs?: number;
  /** An origin's pool with nothing in flight for this long (ms) is destroyed, so pools of endpoints gone do not pile up. */
  idleOriginMs?: number;
  /** Unix ms for the idle-origin bound; the system clock by default (a test moves its own). */
  now?: () => number;
}

/** Enough of an answer to end it cleanly; a receiver cannot make a delivery read more. */
const ANSWER_READ_LIMIT = 64 * 1024;
const REFUSED = 'ERR_WEBHOOK_TARGET_REFUSED';
const REASON_MAX_LENGTH = 200;
const DEFAULT_MAX_SOCKETS_PER_ORIGIN = 16;
/** Below the 5 s keep-alive timeout of Node's own server (and of most proxies), so an idle connection is ours to close first. */
const DEFAULT_IDLE_SOCKET_MS = 4_000;
const DEFAULT_IDLE_ORIGIN_MS = 60_000;

interface Target {
  url: URL;
  host: string;
  ipLiteral: boolean;
}

/** Sockets made by `connect` whose TLS handshake is under way: an error then is a TLS error whatever its code. */
const handshaking = new WeakSet<net.Socket>();

/**
 * An origin's keep-alive pool. Every socket it holds was made by `createConnection` below, that is by a lookup that
 * judges every resolved address and a check of the connected address before a byte is written: a reused connection
 * is one already checked, a new one is checked now (a name that rebinds to a private address between connections
 * is refused on the new one).
 */
class CheckedAgent extends http.Agent {
  /** Attempts using this pool now; a pool is destroyed only with none. */
  inFlight = 0;
  /** Set by the sender on its own clock. */
  lastUsed = 0;

  constructor(
    private readonly target: Target,
    private readonly allowPrivateTargets: boolean,
    private readonly lookup: WebhookLookup,
    private readonly ca: NodeWebhookSenderOptions['ca'],
    private readonly isForbidden: (address: string) => boolean,
    options: { maxSockets: number; idleSocketMs: number },
  ) {
    // LIFO: under a light load the same few connections stay warm and the others reach their idle timeout.
    super({ keepAlive: true, maxSockets: options.maxSockets, maxFreeSockets: options.maxSockets, timeout: options.idleSocketMs, scheduling: 'lifo' });
    // One class for both schemes (the sockets are made below either way); http.request and https.request check it.
    Object.assign(this, { protocol: target.url.protocol, defaultPort: target.url.protocol === 'https:' ? 443 : 80 });
  }

  override createConnection(): net.Socket {
    const { target, allowPrivateTargets, lookup, ca, isForbidden } = this;
    const secure = target.url.protocol === 'https:';
    const guardedLookup: net.LookupFunction = (hostname, options, callback) => {
      lookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, []);
        // A rebinding resolver can hide one private address among public ones; any of them could be the one connected to.
        const forbidden = allowPrivateTargets ? undefined : addresses.find((a) => isForbidden(a.address));
        if (forbidden) return callback(refusedError(forbidden.address), []);
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`host ${hostname} not found`), { code: 'ENOTFOUND' }), []);
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      });
    };
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
      if (secure) handshaking.add(socket);
      const remote = socket.remoteAddress;
      if (!allowPrivateTargets && (remote === undefined || isForbidden(remote))) socket.destroy(refusedError(remote ?? 'unknown'));
    });
    if (socket instanceof tls.TLSSocket) socket.once('secureConnect', () => handshaking.delete(socket));
    return socket;
  }
}

/**
 * Sends webhooks with node:http and node:https rather than fetch or undici:
 * every socket is made here, through a lookup that judges every address before
 * one is connected to, and the connected socket's own address is judged again
 * before a byte is written (ADR 0033). Connections are kept alive per origin
 * (ADR 0039), at most `maxSocketsPerOrigin` of them, closed after
 * `idleSocketMs` idle; an answer read to its end leaves its connection for the
 * next attempt, anything else (an error, a timeout, an answer cut at 64 KiB)
 * destroys it. Nothing here follows redirects: a 3xx is an answer like any
 * other non-2xx.
 */
export class NodeWebhookSender implements WebhookSenderPort {
  private readonly lookup: WebhookLookup;
  private readonly ca: NodeWebhookSenderOptions['ca'];
  private readonly isForbidden: (address: string) => boolean;
  private readonly maxSocketsPerOrigin: number;
  private readonly idleSocketMs: number;
  private readonly idleOriginMs: number;
  private readonly pools = new Map<string, CheckedAgent>();
  private readonly now: () => number;
  private lastSweep: number;

  constructor(options: NodeWebhookSenderOptions = {}) {
    this.lookup = options.lookup ?? dns.lookup;
    this.ca = options.ca;
    this.isForbidden = options.isForbiddenAddress ?? isForbiddenAddress;
    this.maxSocketsPerOrigin = options.maxSocketsPerOrigin ?? DEFAULT_MAX_SOCKETS_PER_ORIGIN;
    this.idleSocketMs = options.idleSocketMs ?? DEFAULT_IDLE_SOCKET_MS;
    this.idleOriginMs = options.idleOriginMs ?? DEFAULT_IDLE_ORIGIN_MS;
    this.now = options.now ?? Date.now;
    this.lastSweep = this.now();
  }

  async send(request: WebhookRequest): Promise<WebhookAttemptResult> {
    try {
      const target = checkTarget(request);
      if ('refusal' in target) return { kind: 'failed', error: `refused: ${target.refusal}`, reason: target.reason, refused: true };
      const pool = this.poolFor(target, request.allowPrivateTargets);
      pool.inFlight += 1;
      try {
        return await deliver(target, request, pool);
      } finally {
        pool.inFlight -= 1;
        pool.lastUsed = this.now();
      }
    } catch (error) {
      // Whatever Node throws (an option it rejects, say) ends this attempt as failed; the caller's loop goes on.
      return { kind: 'failed', ...reasonOf(error, false) };
    }
  }

  /** Origins with a pool now (tests, metrics). */
  get origins(): number {
    return this.pools.size;
  }

  /** Closes every pooled connection (a process stopping; tests). */
  close(): void {
    for (const pool of this.pools.values()) pool.destroy();
    this.pools.clear();
  }

  private poolFor(target: Target, allowPrivateTargets: boolean): CheckedAgent {
    this.sweep();
    const secure = target.url.protocol === 'https:';
    // The check a pool's sockets passed depends on the setting: a pool is never shared across it.
    const key = `${target.url.protocol}//${target.host}:${target.url.port || (secure ? 443 : 80)} ${allowPrivateTargets ? 'private' : 'public'}`;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new CheckedAgent(target, allowPrivateTargets, this.lookup, this.ca, this.isForbidden, {
        maxSockets: this.maxSocketsPerOrigin,
        idleSocketMs: this.idleSocketMs,
      });
      pool.lastUsed = this.now();
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** At most once per idle period: pools with nothing in flight and unused that long are destroyed. */
  private sweep(): void {
    const now = this.now();
    if (now - this.lastSweep < this.idleOriginMs) return;
    this.lastSweep = now;
    for (const [key, pool] of this.pools) {
      if (pool.inFlight === 0 && now - pool.lastUsed >= this.idleOriginMs) {
        pool.destroy();
        this.pools.delete(key);
      }
    }
  }
}

/** The same rules as at registration: the URL may have been stored before the operator changed WEBHOOK_ALLOW_PRIVATE_TARGETS. */
function checkTarget(request: WebhookRequest): Target | { refusal: string; reason: WebhookFailureReason } {
  const syntax = checkWebhookUrl(request.url, { allowPrivateTargets: true });
  if (!syntax.ok) return { refusal: syntax.message, reason: 'refused: invalid URL' };
  if (request.allowPrivateTargets) return syntax;
  const strict = checkWebhookUrl(request.url, { allowPrivateTargets: false });
  if (strict.ok) return strict;
  if (strict.message === WebhookUrlMessages.NOT_HTTPS) return { refusal: 'not an https URL', reason: 'refused: not an https URL' };
  return { refusal: syntax.ipLiteral ? `address ${syntax.host} is not public` : `host ${syntax.host} is not public`, reason: 'refused: private address' };
}

/**
 * One attempt, within one deadline. A kept-alive connection the receiver resets is not tried again at once: the attempt
 * fails as a reset and its retry schedule runs (the receiver may have had the request; the attempts say what happened).
 * Idle connections are closed before a receiver's usual 5 s, and a receiver's shorter `Keep-Alive: timeout` is obeyed.
 */
function deliver(target: Target, request: WebhookRequest, pool: CheckedAgent): Promise<WebhookAttemptResult> {
  return new Promise((resolve) => {
    const secure = target.url.protocol === 'https:';
    let status: number | undefined;
    let settled = false;
    let req: http.ClientRequest | undefined;

    const finish = (result: WebhookAttemptResult, keep = false): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // An answer read to its end leaves its connection to the pool; anything else closes it, so nothing keeps reading.
      if (!keep) req?.destroy();
      resolve(result);
    };
    const fail = (error: unknown): void => {
      if (status !== undefined) return finish({ kind: 'answered', status });
      const socket = req?.socket;
      finish({ kind: 'failed', ...reasonOf(error, secure && socket != null && handshaking.has(socket)) });
    };
    // One deadline for the whole attempt, DNS and a wait for a pooled connection included: the socket's own timeouts only count idle time.
    const timer = setTimeout(
      () => fail(Object.assign(new Error(`timed out after ${request.timeoutMs} ms`), { code: 'ERR_WEBHOOK_TIMEOUT' })),
      request.timeoutMs,
    );

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
        agent: pool,
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
      // Reading a short answer to its end lets the receiver see a completed exchange, and frees the connection for the next attempt.
      res.on('end', () => finish(answered, true));
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

/**
 * A short reason for the operator (`error`, the same for the same cause whatever Node's wording) and the coarse one the
 * client sees (`reason`): which address or port was tried, and whether it refused, reset or never answered, is the
 * operator's to know, not a way for a client to map the network behind the service.
 */
function reasonOf(error: unknown, duringHandshake: boolean): { error: string; reason: WebhookFailureReason; refused: boolean } {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const reason = (text: string, coarse: WebhookFailureReason, refused = false) => ({
    error: text.length > REASON_MAX_LENGTH ? `${text.slice(0, REASON_MAX_LENGTH - 3)}...` : text,
    reason: coarse,
    refused,
  });
  switch (code) {
    case REFUSED:
      return reason(`refused: ${message}`, 'refused: private address', true);
    case 'ERR_WEBHOOK_TIMEOUT':
      return reason(message, 'timed out');
    case 'ERR_WEBHOOK_HEADER':
      return reason(message, 'not sent');
    case 'ECONNREFUSED':
      return reason('connection refused', 'connection failed');
    case 'ECONNRESET':
    case 'EPIPE':
      return reason('connection reset', 'connection failed');
    case 'ENOTFOUND':
    case 'ENODATA':
      return reason('host not found', 'host not found');
    case 'EAI_AGAIN':
      return reason('DNS lookup failed (EAI_AGAIN)', 'host not found');
    case 'ETIMEDOUT':
      return reason('connection timed out', 'connection failed');
    case 'EHOSTUNREACH':
      return reason('host unreachable', 'connection failed');
    case 'ENETUNREACH':
      return reason('network unreachable', 'connection failed');
  }
  if (duringHandshake || code?.startsWith('ERR_TLS_') || code?.startsWith('ERR_SSL_')) return reason(`TLS error: ${tlsReason(message)}`, 'TLS error');
  if (code?.startsWith('HPE_')) return reason(`invalid HTTP answer (${code})`, 'invalid answer');
  return reason(code ? `${code}: ${message}` : message, 'connection failed');
}

/** OpenSSL's own text (`write EPROTO 80...:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:...`) says its reason in one field. */
function tlsReason(message: string): string {
  return /SSL routines:[^:]*:([^:]+)/.exec(message)?.[1] ?? message.split('\n')[0]!;
}
