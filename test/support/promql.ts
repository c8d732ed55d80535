import { parser } from '@prometheus-io/lezer-promql';

/** Grafana's own variables, as Grafana puts them into a query before Prometheus reads it. */
function withGrafanaVariables(expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$__interval', '1m').replaceAll('$__range', '1h');
}

/**
 * What a PromQL expression reads, from Prometheus' own grammar (lezer-promql, the parser of Prometheus' web UI): the
 * metric names it selects and the label names it matches or groups on. Throws on an expression that does not parse,
 * naming where. Grafana's `$__rate_interval` and the like are read as durations.
 */
export function readPromql(expression: string): { metrics: string[]; labels: string[] } {
  const expr = withGrafanaVariables(expression);
  const metrics = new Set<string>();
  const labels = new Set<string>();
  const cursor = parser.parse(expr).cursor();
  do {
    if (cursor.type.isError)
      throw new Error(`PromQL does not parse at ${cursor.from}: ${JSON.stringify(expr.slice(Math.max(0, cursor.from - 20), cursor.from + 20))}`);
    if (cursor.name === 'VectorSelector') {
      const identifier = cursor.node.getChild('Identifier');
      if (identifier) metrics.add(expr.slice(identifier.from, identifier.to));
    }
    if (cursor.name === 'LabelName') labels.add(expr.slice(cursor.from, cursor.to));
  } while (cursor.next());
  return { metrics: [...metrics], labels: [...labels] };
}

/** The metric names an expression selects (readPromql). */
export function metricNamesIn(expr: string): string[] {
  return readPromql(expr).metrics;
}
