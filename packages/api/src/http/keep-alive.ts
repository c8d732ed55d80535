import type http from 'node:http';

/** How much longer than the keep-alive timeout the head of a request may take to arrive. */
const HEADERS_MARGIN_MS = 1_000;

/**
 * An idle kept-alive connection stays open `keepAliveTimeoutMs` (HTTP_KEEP_ALIVE_TIMEOUT_MS): longer than a load
 * balancer's idle timeout (60 s on AWS ALB), so the balancer closes it first and never sends a request on a
 * connection the server is closing at that moment (a sporadic 502). The headers timeout must be above it, as Node
 * documents, or a request arriving just before the idle end would be cut off; the request timeout above both.
 */
export function applyKeepAlive(server: http.Server, keepAliveTimeoutMs: number): void {
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.headersTimeout = keepAliveTimeoutMs + HEADERS_MARGIN_MS;
  if (server.requestTimeout > 0 && server.requestTimeout <= server.headersTimeout) server.requestTimeout = server.headersTimeout + HEADERS_MARGIN_MS;
}
