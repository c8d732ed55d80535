import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';
import { parseSamples, scrapeMetrics } from '../support/prometheus.js';
import { metricNamesIn, readPromql } from '../support/promql.js';

/**
 * deploy/grafana/logistics-api.json against the running service: every query of every panel names only metrics that a
 * live API and a live worker (production profile, the worker with a read replica configured so its replica series are
 * registered) list on their /metrics. A metric is listed by its `# TYPE` line as soon as it is registered, before any
 * sample; a histogram's series are its `_bucket`, `_count` and `_sum`.
 */
const DASHBOARD = path.resolve(import.meta.dirname, '../../deploy/grafana/logistics-api.json');

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Array<{ expr: string; refId: string }>;
  panels?: Panel[];
}

/** The series names an exposition text declares (its `# TYPE` lines), histogram and summary parts included. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_count', '_sum']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_count', '_sum']) names.add(`${name}${suffix}`);
  }
  return names;
}

describe('Grafana dashboard (deploy/grafana/logistics-api.json)', () => {
  let api: TestApi;
  let apiPort: number;
  let workerPort: number;
  beforeAll(async () => {
    apiPort = await freePort();
    api = await startTestApi({ METRICS_PORT: String(apiPort) }, { profile: 'production', worker: false, label: 'dashboard' });
    workerPort = await freePort();
    // The primary named as a replica too: enough for the replica series to be registered.
    await api.stack!.startWorker(api.dataDir, { METRICS_PORT: String(workerPort), DATABASE_READ_URL: api.stack!.env.DATABASE_URL! });
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('when the dashboard is read, then every panel query names only metrics the live API or worker exports', async () => {
    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { uid: string; panels: Panel[] };
    expect(dashboard.uid).toBe('logistics-api');
    const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).filter((panel) => panel.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(20);
    const exported = new Set([...exportedNames(await scrapeMetrics(apiPort)), ...exportedNames(await scrapeMetrics(workerPort))]);
    // The pipeline series are among them (registered at start, before any sample).
    for (const name of ['logistics_webhook_delivery_lag_seconds_bucket', 'logistics_fair_share_wait_seconds_bucket', 'logistics_db_replica_lag_seconds'])
      expect(exported.has(name), name).toBe(true);
    const unknown: string[] = [];
    let named = 0;
    for (const panel of panels) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        const names = metricNamesIn(target.expr);
        expect(names.length, `${panel.title} ${target.refId}`).toBeGreaterThan(0);
        named += names.length;
        for (const name of names) if (!exported.has(name)) unknown.push(`${panel.title} ${target.refId}: ${name}`);
      }
    }
    expect(named).toBeGreaterThan(30);
    expect(unknown).toEqual([]);
  });

  it('when a query names a metric the service does not export, then the check names it', () => {
    const exported = exportedNames('# HELP a_seconds h\n# TYPE a_seconds histogram\n# TYPE b_total counter\n');
    const names = metricNamesIn('histogram_quantile(0.95, sum by (le) (rate(a_seconds_bucket[$__rate_interval]))) / sum(rate(c_total[5m]))');
    expect(names.filter((name) => !exported.has(name))).toEqual(['c_total']);
  });
  it('when a query groups or matches on a label, then the series it reads carry that label (where the scrape had samples of it)', async () => {
    expect((await api.call('/invoices?per_page=1')).status).toBe(200);
    const labelsByName = new Map<string, Set<string>>();
    for (const sample of [...parseSamples(await scrapeMetrics(apiPort)), ...parseSamples(await scrapeMetrics(workerPort))]) {
      const labels = labelsByName.get(sample.name) ?? new Set<string>();
      for (const label of Object.keys(sample.labels)) labels.add(label);
      labelsByName.set(sample.name, labels);
    }
    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: Panel[] };
    const problems: string[] = [];
    let checked = 0;
    for (const panel of dashboard.panels)
      for (const target of panel.targets ?? []) {
        const { metrics, labels } = readPromql(target.expr);
        // `le` is a histogram's own; `instance` and `job` are the ones Prometheus adds to every series it scrapes.
        const asked = labels.filter((label) => !['le', 'instance', 'job'].includes(label));
        for (const metric of metrics) {
          const seen = labelsByName.get(metric);
          if (!seen || seen.size === 0) continue;
          for (const label of asked) {
            checked += 1;
            if (!seen.has(label)) problems.push(`${panel.title}: ${metric} has no label ${label}`);
          }
        }
      }
    expect(checked).toBeGreaterThan(5);
    expect(problems).toEqual([]);
  });

  it('when Grafana lays it out, then ids are unique, every panel fits the 24-column grid and no two panels overlap', async () => {
    const { panels } = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: Panel[] };
    const ids = panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Map<string, string>();
    const overlaps: string[] = [];
    for (const panel of panels) {
      const { x, y, w, h } = panel.gridPos;
      expect(x + w, panel.title).toBeLessThanOrEqual(24);
      for (let row = y; row < y + h; row += 1)
        for (let column = x; column < x + w; column += 1) {
          const other = cells.get(`${row}:${column}`);
          if (other !== undefined) overlaps.push(`${panel.title} / ${other}`);
          cells.set(`${row}:${column}`, panel.title);
        }
    }
    expect([...new Set(overlaps)]).toEqual([]);
  });

  it('when a query does not parse as PromQL, then the check says where', () => {
    expect(() => readPromql('sum(rate(http_request_duration_seconds_count[5m])')).toThrow(/^PromQL does not parse at \d+/);
  });
});
