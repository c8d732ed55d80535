import { expect } from 'vitest';

/** GET /metrics on a metrics listener; asserts a 200 and gives the exposition text. */
export async function scrapeMetrics(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

/** The sample line of `name` whose labels include all of `labels`; undefined when there is none. */
export function sampleLine(text: string, name: string, labels: Record<string, string> = {}): string | undefined {
  return text
    .split('\n')
    .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
}

/** The value of that sample; 0 when absent (a counter not yet touched). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const line = sampleLine(text, name, labels);
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** One sample of the text exposition format: metric name, labels, value. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

/** Every sample of an exposition text, parsed (comments and blank lines skipped); throws on a line it cannot read. */
export function parseSamples(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`not an exposition sample line: ${line}`);
    const labels: Record<string, string> = {};
    const labelText = match[2] ?? '';
    let read = 0;
    LABEL_PAIR.lastIndex = 0;
    let pair: RegExpExecArray | null;
    while ((pair = LABEL_PAIR.exec(labelText)) !== null) {
      labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      read = LABEL_PAIR.lastIndex;
    }
    if (read !== labelText.length) throw new Error(`unreadable labels: ${line}`);
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}
