import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP receiver got it, flattened: the fields the trace tests read. */
export interface ReceivedSpan {
  service: string;
  scope: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  attributes: Record<string, unknown>;
}

export const SpanKind = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpTraces {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{ name: string; kind: number; traceId: string; spanId: string; parentSpanId?: string; attributes?: OtlpAttribute[] }>;
    }>;
  }>;
}

/**
 * A real OTLP/HTTP trace receiver on 127.0.0.1: POST /v1/traces with the JSON
 * encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), answered as a collector
 * does. Anything else is refused, so a sender speaking another encoding fails loudly.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests refused (wrong path, method or encoding): a test expects none. */
  readonly refused: string[] = [];
  private readonly arrivals = new EventEmitter();

  private constructor(
    private readonly server: http.Server,
    readonly endpoint: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver!: OtlpReceiver;
    const server = http.createServer((request, response) => receiver.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  /** Resolves with the spans once `done` holds for them, checked on every export that arrives. */
  waitFor<T>(done: (spans: ReceivedSpan[]) => T | undefined | false, timeoutMs = 30_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const result = done(this.spans);
        if (!result) return;
        cleanup();
        resolve(result);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the receiver did not get the spans awaited within ${timeoutMs} ms; it has ${this.spans.length}: ${this.summary()}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.arrivals.off('spans', check);
      };
      this.arrivals.on('spans', check);
      check();
    });
  }

  /** service/name of every span, for failure messages. */
  summary(): string {
    return this.spans.map((span) => `${span.service}/${span.name}`).join(', ');
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const contentType = request.headers['content-type'] ?? '';
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !contentType.startsWith('application/json')) {
        this.refused.push(`${request.method} ${request.url} ${contentType}`);
        response.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpTraces;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = String(valueOf(resourceSpans.resource?.attributes?.find((a) => a.key === 'service.name')?.value));
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            this.spans.push({
              service,
              scope: scopeSpans.scope?.name ?? '',
              name: span.name,
              kind: span.kind,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, valueOf(a.value)])),
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      this.arrivals.emit('spans');
    });
  }
}

function valueOf(value: OtlpValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}
