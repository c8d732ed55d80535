import { count, escapeCell, ms, table, verdict, when } from './report-format.js';
import type { TracingResults } from './tracing.js';

/** The target of issue 19: list throughput with tracing on at least this share of it with tracing off. */
export const TRACING_TARGET = 0.9;

export interface TracingCheck {
  target: string;
  measured: string;
  met: boolean;
}

/** The Targets table's line for tracing: the default list's requests/s, every span exported. */
export function tracingCheck(t: TracingResults): TracingCheck | null {
  const judged = t.rows.filter((r) => r.judged);
  if (!judged.length) return null;
  const worst = judged.reduce((a, b) => (b.ratio < a.ratio ? b : a));
  return {
    target: `list throughput with OpenTelemetry tracing on ≥ ${TRACING_TARGET} of off`,
    measured:
      `${worst.ratio.toFixed(2)} (${worst.endpoint}: ${worst.onPerSecond.toFixed(0)}/s against ${worst.offPerSecond.toFixed(0)}/s; ` +
      `CPU a request ${ms(worst.onCpuMsPerRequest)} against ${ms(worst.offCpuMsPerRequest)}, ${worst.cpuRatio.toFixed(2)})`,
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
      `Off and on alternated ${t.rounds} times, the better round of each counted. Requests/s is judged; the CPU time of the API process per request ` +
      '(user + system from /proc, the export of the round’s spans included) is what tracing adds whatever else the shared machine runs, ' +
      'and is the throughput ratio of an API that is short of CPU.',
    '',
    table(
      [
        'Endpoint',
        'Spans a request',
        'Off, req/s',
        'On, req/s',
        'On / off',
        'CPU a request, off',
        'on',
        'Off / on',
        'p50 off',
        'p50 on',
        'Requests × connections',
      ],
      t.rows.map((r) => [
        escapeCell(r.endpoint) + (r.judged ? '' : ' (reported)'),
        String(r.spansPerRequest),
        r.offPerSecond.toFixed(0),
        r.onPerSecond.toFixed(0),
        r.ratio.toFixed(2),
        ms(r.offCpuMsPerRequest),
        ms(r.onCpuMsPerRequest),
        r.cpuRatio.toFixed(2),
        ms(r.offP50Ms),
        ms(r.onP50Ms),
        `${count(r.requests)} × ${r.connections}`,
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    `Spans received: ${count(t.spansReceived)} of ${count(t.spansExpected)} made.` + (check ? ` Target: ${check.target}: ${verdict(check.met)}.` : ''),
    '',
  ];
}
