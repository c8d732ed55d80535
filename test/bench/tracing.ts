import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { ApiProcess } from './api-process.js';
import type { BenchConfig } from './config.js';
import { HOST, load, type HttpRequest } from './http.js';
import { log, percentile } from './progress.js';
import { prepareMariadb } from './seed.js';

export interface TracingRow {
  endpoint: string;
  path: string;
  /** Whether the target applies to this row (the default list) or it is only reported. */
  judged: boolean;
  connections: number;
  requests: number;
  offPerSecond: number;
  onPerSecond: number;
  /** on / off: the share of its list throughput the API keeps with tracing on. */
  ratio: number;
  offP50Ms: number;
  onP50Ms: number;
  /** CPU time of the API process per request (user + system, from /proc; exporting included), in the best round of each. */
  offCpuMsPerRequest: number;
  onCpuMsPerRequest: number;
  /** off / on CPU per request: the share of its list throughput the API keeps with tracing on when the CPU is what limits it. */
  cpuRatio: number;
  /** Spans one request of this endpoint makes (server, route, queries, Redis). */
  spansPerRequest: number;
}

export interface TracingResults {
  at: string;
  loadAverage: number[];
  database: string;
  /** The API ran with Redis (rate limits there, as in production) or without. */
  redis: boolean;
  rounds: number;
  rows: TracingRow[];
  /** Every span the traced API made during the load reached the receiver (none dropped by a full queue). */
  spansExpected: number;
  spansReceived: number;
  /** The encoding the exporter sent (the SDK's default unless the shell's OTEL_* say otherwise). */
  contentType: string;
}

/** Environment that leaves tracing off, whatever the shell running the benchmark has set. */
const TRACING_OFF = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_TRACES_EXPORTER: '' };

/**
 * The list as clients get it by default (250 a page, the throughput part's list), judged; and a short
 * page, reported: there the fixed cost of tracing a request weighs most.
 */
const ENDPOINTS = [
  { name: 'GET /v1/invoices (250 a page, the default)', path: '/v1/invoices', judged: true },
  { name: 'GET /v1/invoices?per_page=25', path: '/v1/invoices?per_page=25', judged: false },
];

function integerEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}, not "${raw}"`);
  return value;
}

/**
 * The tracing part (issue 19): the list's throughput on one API process with
 * OpenTelemetry on (every span exported over OTLP/HTTP to a receiver on
 * 127.0.0.1, the SDK's default protocol) against one with it off, same
 * database and Redis, rounds alternated so drift hits both; the better round
 * of each counts. Beside requests/s, the CPU time each API process spent per
 * request (exporting included): the machine is shared, and CPU time is what
 * tracing adds whatever else runs. The exporter's queue is raised so that no
 * span is dropped: the cost measured is that of exporting them all.
 */
export async function benchTracing(config: BenchConfig): Promise<TracingResults> {
  const at = new Date().toISOString();
  const loadAverage = os.loadavg().map((v) => Math.round(v * 100) / 100);
  const requests = integerEnv('BENCH_TRACING_REQUESTS', 2000, 100);
  const rounds = integerEnv('BENCH_TRACING_ROUNDS', 6, 1);
  const db = await prepareMariadb(config, config.sizes[0]!);
  const redis = await reachable(config.redisUrl);
  const common = {
    ...db.env,
    ...(redis ? { REDIS_URL: config.redisUrl, REDIS_PREFIX: `bench-tracing-${randomBytes(4).toString('hex')}` } : {}),
  };
  const auth = { key: db.apiKey, directory: db.directory };
  const receiver = await SpanCountingReceiver.start();
  let off: ApiProcess | null = null;
  let on: ApiProcess | null = null;
  try {
    log(`tracing: ${db.label}${redis ? ' and Redis' : ''}, one API with tracing off and one exporting to ${receiver.endpoint}`);
    off = await ApiProcess.start('API, tracing off', { ...common, ...TRACING_OFF }, auth);
    on = await ApiProcess.start(
      'API, tracing on',
      {
        ...common,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: 'logistics-api-bench',
        OTEL_BSP_SCHEDULE_DELAY: '1000',
        OTEL_BSP_MAX_QUEUE_SIZE: '65536',
      },
      auth,
    );
    const rows: TracingRow[] = [];
    let tracedRequests = 0;
    let spansExpected = 0;
    for (const endpoint of ENDPOINTS) {
      // What one request makes, counted before the load (and after the last load's spans are in): the load's are checked against it.
      const before = await receiver.settled(spansExpected);
      const answer = await on.call({ path: endpoint.path });
      if (answer.status !== 200) throw new Error(`${endpoint.path}: status ${answer.status}`);
      const spansPerRequest = (await receiver.settled()) - before;
      if (spansPerRequest < 3)
        throw new Error(`${endpoint.path}: ${spansPerRequest} span(s) received for one traced request; is the exporter reaching the receiver?`);
      spansExpected += spansPerRequest;
      tracedRequests += 1;

      const make = (api: ApiProcess) => (): HttpRequest => ({ path: endpoint.path, headers: api.auth });
      const warm = Math.min(200, requests);
      await load(off.port, warm, config.connections, make(off));
      await load(on.port, warm, config.connections, make(on));
      spansExpected += warm * spansPerRequest;
      await receiver.settled(spansExpected);
      // A round of each, measured in requests/s and in the API process's CPU time per request.
      const round = async (api: ApiProcess, traced: boolean) => {
        const cpuBefore = cpuMs(api.pid);
        const result = await load(api.port, requests, config.connections, make(api));
        if (traced) {
          spansExpected += requests * spansPerRequest;
          // Exporting this round's spans is part of its cost.
          await receiver.settled(spansExpected);
        }
        return { ...result, cpuMsPerRequest: (cpuMs(api.pid) - cpuBefore) / requests };
      };
      let bestOff = { perSecond: 0, latencies: [] as number[] };
      let bestOn = { perSecond: 0, latencies: [] as number[] };
      let cpuOff = Infinity;
      let cpuOn = Infinity;
      for (let i = 0; i < rounds; i++) {
        const a = await round(off, false);
        const b = await round(on, true);
        if (a.perSecond > bestOff.perSecond) bestOff = a;
        if (b.perSecond > bestOn.perSecond) bestOn = b;
        cpuOff = Math.min(cpuOff, a.cpuMsPerRequest);
        cpuOn = Math.min(cpuOn, b.cpuMsPerRequest);
      }
      off.assertRunning();
      on.assertRunning();
      const row: TracingRow = {
        endpoint: endpoint.name,
        path: endpoint.path,
        judged: endpoint.judged,
        connections: config.connections,
        requests,
        offPerSecond: bestOff.perSecond,
        onPerSecond: bestOn.perSecond,
        ratio: bestOn.perSecond / bestOff.perSecond,
        offP50Ms: percentile(bestOff.latencies, 50),
        onP50Ms: percentile(bestOn.latencies, 50),
        offCpuMsPerRequest: cpuOff,
        onCpuMsPerRequest: cpuOn,
        cpuRatio: cpuOff / cpuOn,
        spansPerRequest,
      };
      log(
        `tracing ${endpoint.name}: off ${row.offPerSecond.toFixed(0)}/s, on ${row.onPerSecond.toFixed(0)}/s -> ${row.ratio.toFixed(2)}; ` +
          `CPU a request off ${cpuOff.toFixed(2)} ms, on ${cpuOn.toFixed(2)} ms -> ${row.cpuRatio.toFixed(2)} ` +
          `(${spansPerRequest} spans a request, ${requests} requests, ${config.connections} connections)`,
      );
      rows.push(row);
    }
    const spansReceived = await receiver.settled(spansExpected);
    log(`tracing: ${spansReceived} spans received of ${spansExpected} made (${tracedRequests} single requests included)`);
    return { at, loadAverage, database: db.label, redis, rounds, rows, spansExpected, spansReceived, contentType: receiver.contentType };
  } finally {
    await Promise.all([off?.stop(), on?.stop()]);
    await receiver.close();
  }
}

/** User + system CPU time the process has used, in ms (/proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function reachable(redisUrl: string): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * An OTLP/HTTP trace receiver that answers as a collector does and counts the
 * spans it gets, in either encoding (protobuf is walked, not decoded: the
 * spans are field 2 of each ScopeSpans in field 2 of each ResourceSpans in field 1).
 */
class SpanCountingReceiver {
  contentType = '';
  private lastArrival = Date.now();
  /** Bodies kept as they come and counted when asked: walking them during the load would take CPU from the machine it measures. */
  private readonly bodies: Array<{ body: Buffer; json: boolean }> = [];
  private counted = 0;

  private constructor(
    private readonly server: http.Server,
    readonly endpoint: string,
  ) {}

  static async start(): Promise<SpanCountingReceiver> {
    let receiver!: SpanCountingReceiver;
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const type = request.headers['content-type'] ?? '';
        receiver.contentType = type;
        receiver.bodies.push({ body: Buffer.concat(chunks), json: type.startsWith('application/json') });
        receiver.lastArrival = Date.now();
        response.writeHead(200, { 'content-type': type || 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
    receiver = new SpanCountingReceiver(server, `http://${HOST}:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  /** Spans received so far. */
  get spans(): number {
    for (const { body, json } of this.bodies.splice(0)) this.counted += json ? jsonSpans(body) : protobufSpans(body);
    return this.counted;
  }

  /** The count once `expected` spans arrived, or once nothing came for 3 s (the exporter sends every second). */
  async settled(expected = Infinity): Promise<number> {
    const started = Date.now();
    for (;;) {
      if (this.spans >= expected) return this.spans;
      const quiet = Date.now() - Math.max(this.lastArrival, started);
      if (quiet > 3_000) return this.spans;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function jsonSpans(body: Buffer): number {
  const parsed = JSON.parse(body.toString('utf8')) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: unknown[] }> }> };
  return (parsed.resourceSpans ?? []).flatMap((r) => r.scopeSpans ?? []).reduce((n, s) => n + (s.spans?.length ?? 0), 0);
}

function protobufSpans(body: Buffer): number {
  let spans = 0;
  for (const resourceSpans of fields(body, 1)) for (const scopeSpans of fields(resourceSpans, 2)) spans += fields(scopeSpans, 2).length;
  return spans;
}

/** The length-delimited values of field `wanted` in one protobuf message. */
function fields(message: Buffer, wanted: number): Buffer[] {
  const found: Buffer[] = [];
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = message[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < message.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    switch (key & 7) {
      case 0:
        varint();
        break;
      case 1:
        at += 8;
        break;
      case 2: {
        const length = varint();
        if (field === wanted) found.push(message.subarray(at, at + length));
        at += length;
        break;
      }
      case 5:
        at += 4;
        break;
      default:
        throw new Error(`protobuf wire type ${key & 7} not expected in an OTLP trace export`);
    }
  }
  return found;
}
