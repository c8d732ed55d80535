import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api-harness.js';
import { freePort } from '../support/free-port.js';
import { scrapeMetrics } from '../support/prometheus.js';
import { metricNamesIn } from '../support/promql.js';

/**
 * deploy/grafana/logistics-api.json against the running service: every query of every panel names only metrics that a
 * live API and a live worker (production profile, the worker with a read replica configured so its replica series are
 * registered) list on their /metrics. A metric is listed by its `# TYPE` line as soon as it is registered, before any
 * sample; a histogram's series are its `_bucket`, `_count` and `_sum`.
 */
const DASHBOARD = path.resolve(import.meta.dirname, '../../deploy/grafana/logistics-api.json');

interface Panel {
  type: string;
  title: string;
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
});
