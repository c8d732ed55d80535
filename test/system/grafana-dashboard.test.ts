import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';
import { parseSamples, scrapeMetrics } from '../support/prometheus.js';

const DASHBOARD = path.resolve('deploy/grafana/logistics-api.json');

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Array<{ refId: string; expr: string }>;
}

/** Grafana's own variables, as Grafana puts them into a query before Prometheus reads it. */
function withGrafanaVariables(expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$__interval', '1m').replaceAll('$__range', '1h');
}

/** The metric names and label names a PromQL expression reads, from Prometheus' own grammar (lezer-promql). */
function selectorsOf(expr: string): { errors: string[]; metrics: string[]; labels: string[] } {
  const tree = parser.parse(expr);
  const errors: string[] = [];
  const metrics: string[] = [];
  const labels: string[] = [];
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError) errors.push(`at ${cursor.from}: ${JSON.stringify(expr.slice(cursor.from, cursor.from + 20))}`);
    if (cursor.name === 'VectorSelector') {
      const identifier = cursor.node.getChild('Identifier');
      if (identifier) metrics.push(expr.slice(identifier.from, identifier.to));
    }
    if (cursor.name === 'LabelName') labels.push(expr.slice(cursor.from, cursor.to));
  } while (cursor.next());
  return { errors, metrics, labels };
}

/** Every sample name a registry may show, from its `# TYPE` lines (a histogram's _bucket, _sum and _count too). */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const match = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (!match) continue;
    const [, name, type] = match as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/**
 * The Grafana dashboard operators import (deploy/grafana/logistics-api.json), read against what the service really
 * exports: the API and a worker in the production profile (MariaDB, Redis, the S3 server), each on its own metrics
 * listener, the worker with a read replica configured so that its series exist.
 */
describe('the Grafana dashboard', () => {
  let api: TestApi;
  let exported: Set<string>;
  let labelsByName: Map<string, Set<string>>;
  let panels: Panel[];

  beforeAll(async () => {
    panels = (JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: Panel[] }).panels;
    const apiMetricsPort = await freePort();
    const workerMetricsPort = await freePort();
    api = await startTestApi({ METRICS_PORT: String(apiMetricsPort) }, { profile: 'production', worker: false, label: 'grafana' });
    // The worker reads through a "replica" (the primary itself), so that the replica series are registered too.
    await api.stack!.startWorker(api.dataDir, { METRICS_PORT: String(workerMetricsPort), DATABASE_READ_URL: api.stack!.env.DATABASE_URL! });
    // A request, an upload-free PDF and a 404, so that labelled series exist and their label names can be read.
    expect((await api.call('/invoices?per_page=1')).status).toBe(200);
    expect((await api.call('/invoices/9001/pdf?lang=en')).status).toBe(200);
    const texts = [await scrapeMetrics(apiMetricsPort), await scrapeMetrics(workerMetricsPort)];
    exported = new Set(texts.flatMap((text) => [...exportedNames(text)]));
    labelsByName = new Map();
    for (const sample of texts.flatMap(parseSamples)) {
      const labels = labelsByName.get(sample.name) ?? new Set<string>();
      for (const label of Object.keys(sample.labels)) labels.add(label);
      labelsByName.set(sample.name, labels);
    }
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('when its queries are parsed as PromQL, then each parses and names only metrics the API or a worker exports', () => {
    const queries = panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: withGrafanaVariables(target.expr) })));
    expect(queries.length).toBeGreaterThanOrEqual(20);
    const problems: string[] = [];
    for (const { panel, expr } of queries) {
      const { errors, metrics } = selectorsOf(expr);
      if (errors.length > 0) problems.push(`${panel}: does not parse ${errors.join(', ')}`);
      if (metrics.length === 0) problems.push(`${panel}: names no metric`);
      for (const metric of metrics) if (!exported.has(metric)) problems.push(`${panel}: ${metric} is not exported`);
    }
    expect(problems).toEqual([]);
  });

  it('when a query groups or matches on a label, then the series it reads carry that label (where the scrape had samples of it)', () => {
    const problems: string[] = [];
    for (const panel of panels)
      for (const target of panel.targets ?? []) {
        const { metrics, labels } = selectorsOf(withGrafanaVariables(target.expr));
        // `le` is the histogram's own; `instance` is the one Prometheus adds to every series it scrapes.
        const asked = labels.filter((label) => label !== 'le' && label !== 'instance');
        for (const metric of metrics) {
          const seen = labelsByName.get(metric);
          if (!seen || seen.size === 0) continue;
          for (const label of asked) if (!seen.has(label)) problems.push(`${panel.title}: ${metric} has no label ${label}`);
        }
      }
    expect(problems).toEqual([]);
  });

  it('when Grafana lays it out, then ids are unique, every panel fits the 24-column grid and no two panels overlap', () => {
    const ids = panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Map<string, string>();
    for (const panel of panels) {
      const { x, y, w, h } = panel.gridPos;
      expect(x + w, panel.title).toBeLessThanOrEqual(24);
      for (let row = y; row < y + h; row += 1)
        for (let column = x; column < x + w; column += 1) {
          const key = `${row}:${column}`;
          expect(cells.get(key), `${panel.title} overlaps ${cells.get(key)}`).toBeUndefined();
          cells.set(key, panel.title);
        }
    }
  });
});
