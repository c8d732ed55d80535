import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@logi/config';
import { PROFILE, startTestApi, type TestApi } from '../support/api-harness.js';

/**
 * Issue 35, point 8: HTTP_KEEP_ALIVE_TIMEOUT_MS. A load balancer reuses an idle kept-alive connection until its own
 * idle timeout (60 s on AWS ALB); a server that closes it sooner (Node's 5 s) races the balancer's next request on it,
 * which the client sees as a 502. By default the server keeps idle connections 65 s, its headers timeout above that.
 */
const SMALL_MS = 1_000;

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({ HTTP_KEEP_ALIVE_TIMEOUT_MS: String(SMALL_MS) }, { label: 'keep-alive', worker: false });
});

afterAll(async () => {
  await api?.stop();
});

/** One request on a new kept-alive connection: the answer's head, the socket left open, and when the answer was read. */
async function keptAlive(root: string): Promise<{ head: string; socket: net.Socket; answeredAt: number }> {
  const { hostname, port } = new URL(root);
  const socket = net.connect(Number(port), hostname);
  socket.on('error', () => undefined);
  socket.write(`GET /health/live HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\n\r\n`);
  let received = '';
  const head = await new Promise<string>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(received.slice(0, end));
      if (end !== -1 && length && received.length >= end + 4 + Number(length[1])) resolve(received.slice(0, end));
    });
    socket.once('close', () => reject(new Error(`closed before the answer: ${received}`)));
  });
  return { head, socket, answeredAt: performance.now() };
}

/** When the server closed the idle connection, in ms after the answer; 'still open' past `boundMs`. */
function idleClose(connection: { socket: net.Socket; answeredAt: number }, boundMs: number): Promise<number | 'still open'> {
  const { socket, answeredAt } = connection;
  return new Promise((resolve) => {
    const bound = setTimeout(() => resolve('still open'), boundMs);
    socket.once('close', () => {
      clearTimeout(bound);
      resolve(performance.now() - answeredAt);
    });
  }).finally(() => socket.destroy()) as Promise<number | 'still open'>;
}

const keepAliveHeader = (head: string) => /\r\nkeep-alive: *([^\r]*)/i.exec(head)?.[1];

describe(`kept-alive connections (${PROFILE})`, () => {
  it('when HTTP_KEEP_ALIVE_TIMEOUT_MS is set, then the server keeps an idle connection that long, says so in Keep-Alive, and closes it after', async () => {
    expect(api.keepAlive).toEqual({ timeoutMs: SMALL_MS, headersTimeoutMs: SMALL_MS + 1_000 });
    const connection = await keptAlive(api.root);
    expect(connection.head.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(keepAliveHeader(connection.head)).toBe(`timeout=${SMALL_MS / 1000}`);
    const closedAfterMs = await idleClose(connection, 10_000);
    expect(closedAfterMs).not.toBe('still open');
    // Node arms the idle timer as the answer is written, a little before the client has read it.
    expect(closedAfterMs).toBeGreaterThanOrEqual(SMALL_MS - 250);
  });

  it('when HTTP_KEEP_ALIVE_TIMEOUT_MS is not set, then idle connections are kept 65 s, above a load balancer 60 s idle timeout, and the headers timeout is above that', async () => {
    expect(loadConfig({}).httpKeepAliveTimeoutMs).toBe(65_000);
    // The server as it runs by default (the embedded profile is enough: the listener is the same in both).
    const byDefault = await startTestApi({}, { profile: 'embedded', label: 'keep-alive-default' });
    try {
      expect(byDefault.keepAlive.timeoutMs).toBe(65_000);
      expect(byDefault.keepAlive.headersTimeoutMs).toBeGreaterThan(65_000);
      const { head, socket } = await keptAlive(byDefault.root);
      socket.destroy();
      expect(keepAliveHeader(head)).toBe('timeout=65');
    } finally {
      await byDefault.stop();
    }
  });

  it('when HTTP_KEEP_ALIVE_TIMEOUT_MS is not a whole number of at least 1000, then the configuration names it', () => {
    for (const value of ['0', '999', '65s', '-1']) {
      expect(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: value })).toThrow(
        /^Configuration error: HTTP_KEEP_ALIVE_TIMEOUT_MS must be a whole number >= 1000/,
      );
    }
  });
});
