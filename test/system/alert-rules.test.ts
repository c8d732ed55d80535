import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { metricNamesIn } from '../support/promql.js';

/**
 * deploy/prometheus: the alerting and recording rules, their unit tests run by promtool (Debian's `prometheus` package,
 * installed by scripts/test.sh), and what ties them to the service: each alert fires in one test and stays quiet in
 * another, links its own section of docs/operate/alerts.md, and reads only metrics the code defines.
 */
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const DEPLOY = path.join(ROOT, 'deploy/prometheus');
const TESTS = path.join(DEPLOY, 'tests');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  annotations?: Record<string, string>;
}
interface RuleTest {
  alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }>;
}

async function rulesOf(file: string): Promise<Rule[]> {
  const doc = parse(await readFile(path.join(DEPLOY, file), 'utf8')) as { groups: Array<{ rules: Rule[] }> };
  return doc.groups.flatMap((group) => group.rules);
}

async function testFiles(): Promise<string[]> {
  return (await readdir(TESTS)).filter((name) => name.endsWith('.test.yml')).sort();
}

/** Every metric the service's code defines with prom-client (API, workers, adapters), by type; prom-client's defaults aside. */
async function definedMetrics(): Promise<Map<string, string>> {
  const defined = new Map<string, string>();
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.name.endsWith('.ts')) {
        const text = await readFile(full, 'utf8');
        for (const match of text.matchAll(/new (Counter|Gauge|Histogram|Summary)(?:<[^>]*>)?\(\{\s*name:\s*'([a-zA-Z_:][a-zA-Z0-9_:]*)'/g))
          defined.set(match[2]!, match[1]!);
      }
    }
  };
  for (const pkg of ['api', 'worker', 'adapters']) await walk(path.join(ROOT, 'packages', pkg, 'src'));
  return defined;
}

describe('Prometheus alerting rules (deploy/prometheus)', () => {
  it('when promtool checks the rule files and runs every unit test file, then all pass', async () => {
    const checked = await run('promtool', ['check', 'rules', 'alerts.yml', 'recording-rules.yml'], { cwd: DEPLOY });
    expect(checked.stdout).toContain('SUCCESS: 17 rules found');
    const files = await testFiles();
    expect(files.length).toBeGreaterThanOrEqual(5);
    // promtool exits non-zero when any test fails; its report names each file it ran.
    const tested = await run('promtool', ['test', 'rules', ...files], { cwd: TESTS });
    expect(tested.stdout.match(/SUCCESS/g)).toHaveLength(files.length);
    expect(tested.stdout).not.toContain('FAILED');
  }, 120_000);

  it('when the unit tests are read, then every alert has one that fires and one that stays quiet, and none names an unknown alert', async () => {
    const alerts = (await rulesOf('alerts.yml')).flatMap((rule) => (rule.alert ? [rule.alert] : []));
    const fires = new Set<string>();
    const quiet = new Set<string>();
    for (const file of await testFiles()) {
      const doc = parse(await readFile(path.join(TESTS, file), 'utf8')) as { tests: RuleTest[] };
      for (const test of doc.tests) {
        for (const check of test.alert_rule_test ?? []) {
          expect(alerts, `${file} tests an alert alerts.yml does not have`).toContain(check.alertname);
          ((check.exp_alerts ?? []).length > 0 ? fires : quiet).add(check.alertname);
        }
      }
    }
    expect(alerts.filter((alert) => !fires.has(alert))).toEqual([]);
    expect(alerts.filter((alert) => !quiet.has(alert))).toEqual([]);
  });

  it('when an alert fires, then its runbook_url is its own section of docs/operate/alerts.md', async () => {
    const doc = await readFile(path.join(ROOT, 'docs/operate/alerts.md'), 'utf8');
    const sections = new Set([...doc.matchAll(/^### (\S+)$/gm)].map((match) => match[1]!.toLowerCase()));
    const urls: string[] = [];
    for (const rule of await rulesOf('alerts.yml')) {
      if (!rule.alert) continue;
      const url = rule.annotations?.runbook_url;
      expect(url, rule.alert).toBe(`docs/operate/alerts.md#${rule.alert.toLowerCase()}`);
      expect(sections.has(rule.alert.toLowerCase()), `docs/operate/alerts.md has no "### ${rule.alert}"`).toBe(true);
      urls.push(url!);
    }
    expect(new Set(urls).size).toBe(urls.length);
  });

  it('when a rule reads a metric, then the service defines it (a histogram through its _bucket, _count or _sum series)', async () => {
    const defined = await definedMetrics();
    // The lead's export metrics and this pipeline metrics are among them.
    for (const name of ['logistics_exports_finished_total', 'logistics_webhook_delivery_lag_seconds', 'logistics_dependency_up'])
      expect(defined.has(name)).toBe(true);
    const rules = [...(await rulesOf('alerts.yml')), ...(await rulesOf('recording-rules.yml'))];
    const recorded = new Set(rules.flatMap((rule) => (rule.record ? [rule.record] : [])));
    const unknown: string[] = [];
    let read = 0;
    for (const rule of rules) {
      for (const name of metricNamesIn(rule.expr)) {
        read += 1;
        if (recorded.has(name)) continue;
        const histogram = /^(.*)_(bucket|count|sum)$/.exec(name);
        const known = defined.has(name) || (histogram !== null && defined.get(histogram[1]!) === 'Histogram');
        if (!known) unknown.push(`${rule.alert ?? rule.record}: ${name}`);
      }
    }
    expect(read).toBeGreaterThan(30);
    expect(unknown).toEqual([]);
  });

  it('when an expression is read for metric names, then label values, groupings and ranges are not taken for metrics', () => {
    expect(
      metricNamesIn(
        'max by (queue) (logistics_queue_jobs{queue="pdf", state="waiting"}) > 50 and rate(http_request_duration_seconds_count{status=~"5.."}[5m])',
      ),
    ).toEqual(['logistics_queue_jobs', 'http_request_duration_seconds_count']);
    expect(metricNamesIn('histogram_quantile(0.95, sum by (le) (rate(no_such_metric_bucket[10m]))) > 2.5')).toEqual(['no_such_metric_bucket']);
  });
});
