import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request as the receiver got it. */
export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The status the receiver answered (0: it did not answer: reset or held). */
  answered: number;
}

export type ReceiverBehaviour = 'ok' | 'fail' | 'reset' | 'hold';

/**
 * A webhook receiver on 127.0.0.1, as a client would run one: it records
 * every request and answers as told (200, 500, a reset connection, or no
 * answer at all). Tests wait for a number of requests, never for a time.
 */
export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  behaviour: ReceiverBehaviour = 'ok';
  private waiters: Array<{ count: number; resolve: () => void }> = [];
  private readonly held = new Set<http.ServerResponse>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | null = null;
    const server = http.createServer((req, res) => receiver!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    return receiver;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const behaviour = this.behaviour;
      const record: ReceivedWebhook = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered: 0 };
      this.requests.push(record);
      if (behaviour === 'reset') req.socket.destroy();
      else if (behaviour === 'hold') this.held.add(res);
      else {
        record.answered = behaviour === 'ok' ? 200 : 500;
        res.writeHead(record.answered, { 'Content-Type': 'text/plain' }).end(behaviour);
      }
      this.waiters = this.waiters.filter((waiter) => (this.requests.length >= waiter.count ? (waiter.resolve(), false) : true));
    });
  }

  /** Answers every held request with `status` (those still open: an attempt may have timed out meanwhile). */
  release(status = 200): void {
    for (const res of this.held) if (!res.writableEnded && !res.destroyed) res.writeHead(status, { 'Content-Type': 'text/plain' }).end('released');
    this.held.clear();
  }

  /** Resolves once `count` requests in all have arrived (or rejects after `ms`). */
  waitFor(count: number, ms = 30_000): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the receiver got ${this.requests.length} of ${count} requests in ${ms} ms`)), ms);
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /** The event a request carried, verified with `secret` by the standardwebhooks package (throws when it does not verify). */
  static verify(
    request: ReceivedWebhook,
    secret: string,
  ): { id: number; type: string; created: number; data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> } } {
    return new Webhook(secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    }) as never;
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
