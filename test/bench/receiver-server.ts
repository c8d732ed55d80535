/**
 * The webhook receiver of the events part, in a process of its own (as a
 * client's would be): node:http on 127.0.0.1 answering every POST with 200
 * once its body is read, no verification. It prints `listening <port>`,
 * then talks to the benchmark over IPC:
 * - `{ cmd: 'expect', count }`: counting starts from zero; when `count`
 *   requests have arrived it sends `{ type: 'counted', count, first, last,
 *   samples }` (receipt times of the first and the last, the first few
 *   requests whole so the benchmark can verify their signatures);
 * - `{ cmd: 'watch', on }`: with `on`, every request is reported as
 *   `{ type: 'got', at, webhookId, path, body }`.
 * Times are wall-clock milliseconds with sub-millisecond precision
 * (`performance.timeOrigin + performance.now()`), comparable across
 * processes of one machine. It stops when its IPC channel closes.
 * `--delay-ms <n>` (the fairness part's slow receiver): every answer is
 * sent n ms after the body was read (the request still counts at receipt).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const SAMPLES = 4;
const delayAt = process.argv.indexOf('--delay-ms');
const DELAY_MS = delayAt >= 0 ? Number(process.argv[delayAt + 1]) : 0;

interface Sample {
  path: string;
  headers: Record<string, string>;
  body: string;
}

let expected = 0;
let count = 0;
let first = 0;
let last = 0;
let samples: Sample[] = [];
let watching = false;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    const answer = () => res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 2 }).end('ok');
    if (DELAY_MS > 0) setTimeout(answer, DELAY_MS);
    else answer();
    count += 1;
    if (count === 1) first = at;
    last = at;
    const body = watching || samples.length < SAMPLES ? Buffer.concat(chunks).toString('utf8') : '';
    if (samples.length < SAMPLES) {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));
      samples.push({ path: req.url ?? '', headers, body });
    }
    if (watching) process.send!({ type: 'got', at, webhookId: String(req.headers['webhook-id'] ?? ''), path: req.url ?? '', body });
    if (expected > 0 && count === expected) process.send!({ type: 'counted', count, first, last, samples });
  });
});
server.keepAliveTimeout = 60_000;

process.on('message', (message: { cmd: 'expect'; count: number } | { cmd: 'watch'; on: boolean }) => {
  if (message.cmd === 'expect') {
    expected = message.count;
    count = 0;
    first = 0;
    last = 0;
    samples = [];
  } else watching = message.on;
});
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`));
