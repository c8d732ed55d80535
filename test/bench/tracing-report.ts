import { count, escapeCell, ms, table, verdict, when } from './report-format.js';
import type { TracingResults } from './tracing.js';

/** The target of issue 19: list throughput with tracing on at least this share of it with tracing off. */
export const TRACING_TARGET = 0.9;

export interface TracingCheck {
  target: string;
  measured: string;
  met: boolean;
}

/** The Targets table's line for tracing. */
export function tracingCheck(t: TracingResults): TracingCheck | null {
  if (!t.rows.length) return null;
  const worst = t.rows.reduce((a, b) => (b.ratio < a.ratio ? b : a));
  return {
    target: `list throughput with OpenTelemetry tracing on ≥ ${TRACING_TARGET} of off`,
    measured: `lowest ${worst.ratio.toFixed(2)} (${worst.endpoint}: ${worst.onPerSecond.toFixed(0)}/s against ${worst.offPerSecond.toFixed(0)}/s)`,
    met: worst.ratio >= TRACING_TARGET && t.spansReceived >= t.spansExpected,
  };
}

export function tracingSection(t: TracingResults): string[] {
  const check = tracingCheck(t);
  return [
    '## Tracing overhead',
    '',
    `Run of ${when(t.at)} (\`BENCH_PARTS=tracing pnpm bench\`; load average at its start ${t.loadAverage.join(', ')}). ` +
      `Two API processes on ${t.database}${t.redis ? ' with Redis (rate limits there, as in production)' : ''}: one without OTEL_* variables, so nothing of ` +
      'OpenTelemetry loads, and one with `OTEL_EXPORTER_OTLP_ENDPOINT` set, exporting every span over OTLP/HTTP ' +
      `(${escapeCell(t.contentType || 'unknown encoding')}) to a receiver on 127.0.0.1 that counts them. Its batch queue is raised ` +
      '(`OTEL_BSP_MAX_QUEUE_SIZE=65536`, `OTEL_BSP_SCHEDULE_DELAY=1000`) so that no span is dropped: the cost is that of exporting them all. ' +
      `Requests per round as below over keep-alive connections; off and on alternated ${t.rounds} times, the better round of each counted.`,
    '',
    table(
      ['Endpoint', 'Spans a request', 'Off, req/s', 'On, req/s', 'On / off', 'p50 off', 'p50 on', 'Requests × connections'],
      t.rows.map((r) => [
        escapeCell(r.endpoint),
        String(r.spansPerRequest),
        r.offPerSecond.toFixed(0),
        r.onPerSecond.toFixed(0),
        r.ratio.toFixed(2),
        ms(r.offP50Ms),
        ms(r.onP50Ms),
        `${count(r.requests)} × ${r.connections}`,
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    `Spans received: ${count(t.spansReceived)} of ${count(t.spansExpected)} made.` + (check ? ` Target: ${check.target}: ${verdict(check.met)}.` : ''),
    '',
  ];
}
