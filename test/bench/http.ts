import http from 'node:http';

/** Loopback only: every address the benchmark talks to is 127.0.0.1. */
export const HOST = '127.0.0.1';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** From the request's start to the body's last byte. */
  ms: number;
}

export interface HttpRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
  timeoutMs?: number;
}

/** One request over a keep-alive agent; the whole body is read (and kept unless `discard`). */
export function request(agent: http.Agent, port: number, req: HttpRequest, discard = false): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body) headers['Content-Length'] = req.body.length;
    const call = http.request({ host: HOST, port, method: req.method ?? 'GET', path: req.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      let length = 0;
      res.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (!discard) chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: discard ? Buffer.alloc(0) : Buffer.concat(chunks, length),
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        }),
      );
      res.on('error', reject);
    });
    call.setTimeout(req.timeoutMs ?? 180_000, () =>
      call.destroy(new Error(`no answer to ${req.method ?? 'GET'} ${req.path} within ${(req.timeoutMs ?? 180_000) / 1000} s`)),
    );
    call.on('error', reject);
    call.end(req.body);
  });
}

export function keepAliveAgent(maxSockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  /** Latency of each request under that load, ms. */
  latencies: number[];
}

/**
 * `total` requests over `connections` keep-alive connections, each
 * connection sending its next request when the previous answer is read.
 * Every answer must have `expectStatus`.
 */
export async function load(port: number, total: number, connections: number, make: (i: number) => HttpRequest, expectStatus = 200): Promise<LoadResult> {
  const agent = keepAliveAgent(connections);
  let next = 0;
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        for (;;) {
          const i = next++;
          if (i >= total) return;
          const answer = await request(agent, port, make(i), true);
          if (answer.status !== expectStatus) throw new Error(`${make(i).path}: status ${answer.status}, expected ${expectStatus}`);
          latencies.push(answer.ms);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { requests: total, seconds, perSecond: total / seconds, latencies };
}
